//! TypeScript to JavaScript for Boa: oxc parses, builds semantics (with enum evaluation), strips
//! every type and lowers the TypeScript-only runtime syntax (enums, namespaces, parameter
//! properties). Syntax Boa cannot run and oxc cannot lower for it is refused with its original
//! location. The result carries a position map back to the original file, because codegen does
//! not keep line numbers.

use std::path::Path;

use oxc::allocator::Allocator;
use oxc::ast::ast::{
    Decorator, Expression, ImportExpression, TSExportAssignment, TSImportEqualsDeclaration,
    TSModuleReference,
};
use oxc::ast_visit::Visit;
use oxc::codegen::{Codegen, CodegenOptions};
use oxc::diagnostics::OxcDiagnostic;
use oxc::parser::Parser;
use oxc::semantic::SemanticBuilder;
use oxc::span::Span;
use oxc::transformer::{TransformOptions, Transformer};

use crate::sources::parse_guard;
use crate::sources::{relative_imports, source_type_of};

/// A place in an original source file, 1-based, as editors show it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceLocation {
    /// The original file.
    pub file: String,
    /// 1-based line.
    pub line: u32,
    /// 1-based column.
    pub column: u32,
}

impl std::fmt::Display for SourceLocation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.column)
    }
}

/// Why a file could not be turned into JavaScript for Boa.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{location}: {message}")]
pub struct StripError {
    /// Where, in the original file.
    pub location: SourceLocation,
    /// What is wrong there.
    pub message: String,
}

/// A stripped module: the JavaScript Boa runs, and the way back to the original positions.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct StrippedModule {
    /// The JavaScript.
    pub code: String,
    /// Generated position to original position.
    pub positions: PositionMap,
}

/// Generated (line, column) to original (line, column), from oxc's source map.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PositionMap {
    /// (generated line, generated column, original line, original column), 0-based, sorted.
    tokens: Vec<(u32, u32, u32, u32)>,
}

impl PositionMap {
    /// The original 1-based (line, column) of a generated 1-based (line, column): the nearest
    /// mapping at or before it on the same generated line.
    pub fn original(&self, line: u32, column: u32) -> Option<(u32, u32)> {
        let (line, column) = (line.checked_sub(1)?, column.saturating_sub(1));
        let index = self
            .tokens
            .partition_point(|&(l, c, _, _)| (l, c) <= (line, column));
        let candidate = if index > 0 {
            self.tokens[index - 1]
        } else {
            *self.tokens.first()?
        };
        let (generated_line, _, original_line, original_column) = candidate;
        if generated_line != line {
            // No mapping on this line before the column: take the first one on the line.
            let first = self.tokens.iter().find(|token| token.0 == line)?;
            return Some((first.2 + 1, first.3 + 1));
        }
        Some((original_line + 1, original_column + 1))
    }
}

/// One parse of an extension file: the relative modules it imports (the edges its trust digest
/// follows) and its stripped JavaScript, or why that cannot run. One parse serves both, so that
/// admitting and loading an extension reads each file with oxc once.
#[derive(Debug, Clone)]
pub struct Analysis {
    /// The relative specifiers it imports, as the trust digest reads them
    /// (`sources::relative_imports`); found even when the file has a syntax error.
    pub imports: Vec<String>,
    /// The JavaScript for Boa, or why the file cannot become a module.
    pub module: Result<StrippedModule, StripError>,
}

/// Strips `source` (the text of `path`) to JavaScript Boa can evaluate as an ES module.
///
/// # Errors
/// A [`StripError`] at the first syntax error, or at syntax Boa cannot run (decorators,
/// `import x = require(...)`, `export =`).
pub fn strip_types(path: &Path, source: &str) -> Result<StrippedModule, StripError> {
    let display = path.display().to_string();
    parse_guard::check_source(source).map_err(|(offset, message)| StripError {
        location: location_of(&display, source, offset as u32),
        message,
    })?;
    parse_guard::on_parse_thread(path, || analyse_unguarded(path, source).module).map_err(
        |message| StripError {
            location: location_of(&display, source, 0),
            message,
        },
    )?
}

/// Parses `source` (the text of `path`) once, behind the guards of [`parse_guard`], for its
/// imports and its stripped JavaScript.
///
/// # Errors
/// `path:line:col: why` when the file is refused before parsing (too large, nested too deep) or
/// the parser failed: then not even its imports are known.
pub fn analyse(path: &Path, source: &str) -> Result<Analysis, String> {
    parse_guard::check_source(source)
        .map_err(|problem| parse_guard::located(path, source, problem))?;
    parse_guard::on_parse_thread(path, || analyse_unguarded(path, source))
}

fn analyse_unguarded(path: &Path, source: &str) -> Analysis {
    let allocator = Allocator::default();
    let parsed = Parser::new(&allocator, source, source_type_of(path)).parse();
    let imports = relative_imports(&parsed.module_record, source);
    let module = strip_parsed(path, source, &allocator, parsed);
    Analysis { imports, module }
}

fn strip_parsed<'a>(
    path: &Path,
    source: &str,
    allocator: &'a Allocator,
    parsed: oxc::parser::ParserReturn<'a>,
) -> Result<StrippedModule, StripError> {
    let display = path.display().to_string();
    let at = |offset: u32, message: String| StripError {
        location: location_of(&display, source, offset),
        message,
    };
    if let Some(error) = parsed.diagnostics.errors().next() {
        return Err(at(first_offset(error), error.to_string()));
    }
    let mut program = parsed.program;

    let mut refusals = Unsupported::default();
    refusals.visit_program(&program);
    if let Some((span, message)) = refusals.first {
        return Err(at(span.start, message));
    }

    let semantic = SemanticBuilder::new().with_enum_eval(true).build(&program);
    if let Some(error) = semantic.diagnostics.errors().next() {
        return Err(at(first_offset(error), error.to_string()));
    }
    let scoping = semantic.semantic.into_scoping();
    let options = TransformOptions::default();
    let transformed =
        Transformer::new(allocator, path, &options).build_with_scoping(scoping, &mut program);
    if let Some(error) = transformed.diagnostics.errors().next() {
        return Err(at(first_offset(error), error.to_string()));
    }
    let generated = Codegen::new()
        .with_options(CodegenOptions {
            source_map_path: Some(path.to_path_buf()),
            ..CodegenOptions::default()
        })
        .build(&program);
    let mut tokens: Vec<(u32, u32, u32, u32)> = generated
        .map
        .as_ref()
        .map(|map| {
            map.get_tokens()
                .map(|t| {
                    (
                        t.get_dst_line(),
                        t.get_dst_col(),
                        t.get_src_line(),
                        t.get_src_col(),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    tokens.sort_unstable();
    Ok(StrippedModule {
        code: generated.code,
        positions: PositionMap { tokens },
    })
}

/// The 1-based line and column (in characters) of a byte offset.
pub fn location_of(file: &str, source: &str, offset: u32) -> SourceLocation {
    let offset = (offset as usize).min(source.len());
    let before = source.get(..offset).unwrap_or(source);
    let line = before.matches('\n').count() as u32 + 1;
    let line_start = before.rfind('\n').map_or(0, |index| index + 1);
    let column = before[line_start..].chars().count() as u32 + 1;
    SourceLocation {
        file: file.to_string(),
        line,
        column,
    }
}

fn first_offset(diagnostic: &OxcDiagnostic) -> u32 {
    diagnostic.labels.first().map_or(0, |label| label.offset())
}

/// Finds the first syntax that has no meaning for Boa once types are gone.
#[derive(Default)]
struct Unsupported {
    first: Option<(Span, String)>,
}

impl Unsupported {
    fn refuse(&mut self, span: Span, message: &str) {
        if self
            .first
            .as_ref()
            .is_none_or(|(seen, _)| span.start < seen.start)
        {
            self.first = Some((span, message.to_string()));
        }
    }
}

impl<'a> Visit<'a> for Unsupported {
    fn visit_decorator(&mut self, it: &Decorator<'a>) {
        self.refuse(
            it.span,
            "decorators are not supported in extensions (Boa cannot run them); call the function directly instead",
        );
    }

    fn visit_ts_import_equals_declaration(&mut self, it: &TSImportEqualsDeclaration<'a>) {
        if matches!(
            it.module_reference,
            TSModuleReference::ExternalModuleReference(_)
        ) {
            self.refuse(
                it.span,
                "`import x = require(...)` is CommonJS and not supported; use `import x from \"./file.ts\"`",
            );
        }
    }

    fn visit_import_expression(&mut self, it: &ImportExpression<'a>) {
        if let Expression::StringLiteral(literal) = &it.source
            && literal.raw.is_some_and(|raw| raw.contains('\\'))
        {
            self.refuse(
                it.span,
                "`import()` of a specifier with escape sequences is not supported: write the path plainly",
            );
        } else if !matches!(it.source, Expression::StringLiteral(_)) {
            self.refuse(
                it.span,
                "`import()` of a computed specifier is not supported: a trust record can only cover files named in the source; write the path as a string literal",
            );
        }
    }

    fn visit_ts_export_assignment(&mut self, it: &TSExportAssignment<'a>) {
        self.refuse(
            it.span,
            "`export =` is CommonJS and not supported; use `export default`",
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_computed_dynamic_import_is_refused_where_it_is_written() {
        let source = "const name = 'x';\nexport default await import(`./${name}.ts`);\n";
        let error = strip_types(Path::new("dyn.ts"), source).unwrap_err();
        assert_eq!((error.location.line, error.location.column), (2, 22));
        assert!(error.message.contains("computed specifier"), "{error}");
        assert!(strip_types(Path::new("ok.ts"), "export default await import('./a.ts');").is_ok());
        // An escaped specifier names another file than its text shows to the trust digest.
        let escaped = strip_types(Path::new("esc.ts"), "await import('./\\x61.ts');").unwrap_err();
        assert!(escaped.message.contains("escape sequences"), "{escaped}");
    }

    #[test]
    fn a_position_in_the_stripped_code_maps_back_to_the_typescript() {
        let source =
            "interface A { x: number }\ntype B = string;\nexport const value: number = 1;\n";
        let stripped = strip_types(Path::new("m.ts"), source).unwrap();
        let line = stripped
            .code
            .lines()
            .position(|l| l.contains("value"))
            .unwrap() as u32
            + 1;
        assert_eq!(stripped.positions.original(line, 1).map(|p| p.0), Some(3));
    }

    #[test]
    fn a_file_nested_too_deep_is_refused_where_it_passes_the_limit_instead_of_crashing() {
        // Shallow enough to parse, deep enough for the passes after the parser: a member chain.
        let chain = format!("export const x = a{};\n", ".b".repeat(100_000));
        let error = strip_types(Path::new("chain.ts"), &chain).unwrap_err();
        assert!(error.message.contains("nests deeper than"), "{error}");
        assert_eq!(error.location.line, 1);
        let nested = format!(
            "\nexport default {}1{};",
            "[".repeat(100_000),
            "]".repeat(100_000)
        );
        let error = strip_types(Path::new("deep.ts"), &nested).unwrap_err();
        // Line 2, where the thousandth level opens.
        assert_eq!(error.location.line, 2);
        assert!((1_000..1_020).contains(&error.location.column), "{error}");
        assert!(strip_types(Path::new("jsx.js"), "export default <div>'</div>;").is_err());
    }

    #[test]
    fn location_counts_lines_and_characters_from_one() {
        let location = location_of("f.ts", "ab\ncdé f", 7);
        assert_eq!((location.line, location.column), (2, 4));
    }
}
