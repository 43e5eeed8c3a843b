//! What the model is told about the skills it may load: each one's name and description, made
//! safe and small, within one budget.
//!
//! A description is the author's text going into every prompt, so it is stripped of control
//! characters and escape sequences, `<`, `>` and `&` are escaped (it cannot close the block it
//! sits in or open a label of its own), and it is capped at 1,024 characters. The whole
//! catalogue fits a budget (8,000 characters by default, `skills.catalogueBudget` in settings):
//! skills are taken in name order until the next would not fit, and a notice names how many were
//! left out, so the same skills always give the same catalogue.

use super::item::{ItemOrigin, LoadedItem};

/// The catalogue's default budget, in characters.
pub const DEFAULT_BUDGET: usize = 8_000;

/// The most characters of one skill's description (with its `when_to_use`).
pub const DESCRIPTION_CAP: usize = 1_024;

const HEADER: &str = "<available_skills>\n";
const FOOTER: &str = "</available_skills>\n";
/// How many left-out skills the notice names.
const NOTICE_NAMES: usize = 10;
/// Room kept for the notice: its words, ten names of at most 64 characters, and the count.
const NOTICE_ALLOWANCE: usize = 160 + NOTICE_NAMES * 66;

/// The catalogue's budget in `settings`: `skills.catalogueBudget`, else [`DEFAULT_BUDGET`].
pub fn budget(settings: &crate::settings::Settings) -> usize {
    settings
        .tunable("skills", "catalogueBudget")
        .and_then(serde_json::Value::as_u64)
        .map_or(DEFAULT_BUDGET, |budget| budget as usize)
}

/// One skill as the model is told of it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct CatalogueEntry {
    /// Its name (what the `skill` tool takes).
    pub name: String,
    /// Its description and `when_to_use`, sanitised, escaped and capped.
    pub description: String,
    /// Whose it is.
    pub origin: ItemOrigin,
}

/// The skills the model may load, within the budget.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Catalogue {
    /// The skills told of, sorted by name.
    pub entries: Vec<CatalogueEntry>,
    /// The skills left out to fit the budget, sorted by name (still loadable by name).
    pub left_out: Vec<String>,
    /// The budget it was cut to, in characters.
    pub budget: usize,
}

impl Catalogue {
    /// The catalogue of `skills` (any order) within `budget` characters.
    pub fn build<'a>(skills: impl IntoIterator<Item = &'a LoadedItem>, budget: usize) -> Catalogue {
        let mut all: Vec<CatalogueEntry> = skills
            .into_iter()
            .map(|item| {
                let mut text = item.description().trim().to_string();
                if let Some(when) = item.frontmatter.when_to_use.as_deref() {
                    text.push(' ');
                    text.push_str(when.trim());
                }
                CatalogueEntry {
                    name: item.name.clone(),
                    description: escaped(&sanitised_line(&text, DESCRIPTION_CAP)),
                    origin: item.origin,
                }
            })
            .collect();
        all.sort_by(|a, b| a.name.cmp(&b.name));
        // The whole text counts: the block's two lines and, when anything is left out, the
        // notice (which names at most NOTICE_NAMES skills).
        let frame = HEADER.len() + FOOTER.len();
        let total: usize = all
            .iter()
            .map(|entry| entry_line(entry).chars().count())
            .sum();
        let mut used = frame
            + if frame + total > budget {
                NOTICE_ALLOWANCE
            } else {
                0
            };
        let mut entries = Vec::new();
        let mut left_out = Vec::new();
        for entry in all {
            let cost = entry_line(&entry).chars().count();
            if left_out.is_empty() && used + cost <= budget {
                used += cost;
                entries.push(entry);
            } else {
                left_out.push(entry.name);
            }
        }
        Catalogue {
            entries,
            left_out,
            budget,
        }
    }

    /// Whether there is no skill at all.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty() && self.left_out.is_empty()
    }

    /// The notice when skills were left out, else `None`: how many, the first few names.
    pub fn notice(&self) -> Option<String> {
        (!self.left_out.is_empty()).then(|| {
            let named: Vec<&str> = self
                .left_out
                .iter()
                .take(NOTICE_NAMES)
                .map(String::as_str)
                .collect();
            let more = self.left_out.len().saturating_sub(NOTICE_NAMES);
            format!(
                "{} skill(s) were left out of this list to fit its {}-character budget ({}{}); the skill tool still loads them by name",
                self.left_out.len(),
                self.budget,
                named.join(", "),
                if more > 0 {
                    format!(" and {more} more")
                } else {
                    String::new()
                }
            )
        })
    }

    /// The catalogue as the model reads it: one `<skill>` line each inside `<available_skills>`,
    /// then the notice.
    pub fn text(&self) -> String {
        let mut text = String::from(HEADER);
        for entry in &self.entries {
            text.push_str(&entry_line(entry));
        }
        text.push_str(FOOTER);
        if let Some(notice) = self.notice() {
            text.push_str(&notice);
            text.push('\n');
        }
        text
    }
}

fn entry_line(entry: &CatalogueEntry) -> String {
    format!(
        "<skill name=\"{}\">{}</skill>\n",
        entry.name, entry.description
    )
}

/// Characters that render as nothing or reorder what is shown: bidi controls, zero-width and
/// filler characters, line and paragraph separators, the byte order mark, soft hyphens,
/// variation selectors (which can carry a hidden byte each) and Unicode tag characters (which can
/// spell a whole sentence no terminal shows). Text that reaches the model from a skill or command drops
/// them, and `show` makes them visible.
pub fn is_hidden(c: char) -> bool {
    earshot_terminal_text::is_bidi_override(c)
        || matches!(
            c,
            '\u{ad}'
                | '\u{34f}'
                | '\u{61c}'
                | '\u{115f}'
                | '\u{1160}'
                | '\u{17b4}'
                | '\u{17b5}'
                | '\u{180b}'..='\u{180f}'
                | '\u{200b}'..='\u{200f}'
                | '\u{2028}'..='\u{202e}'
                | '\u{2060}'..='\u{206f}'
                | '\u{3164}'
                | '\u{fe00}'..='\u{fe0f}'
                | '\u{feff}'
                | '\u{ffa0}'
                | '\u{fff9}'..='\u{fffb}'
                | '\u{1d173}'..='\u{1d17a}'
                | '\u{e0000}'..='\u{e007f}'
                | '\u{e0100}'..='\u{e01ef}'
        )
}

/// `text` without [`is_hidden`] characters.
pub fn without_hidden(text: &str) -> String {
    if !text.chars().any(is_hidden) {
        return text.to_string();
    }
    text.chars().filter(|&c| !is_hidden(c)).collect()
}

/// `text` with every control and [`is_hidden`] character but newline and tab shown as
/// `⟦U+XXXX⟧`, for a review that must see what a terminal would not show.
pub fn visible(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if (c.is_control() && c != '\n' && c != '\t') || is_hidden(c) {
            out.push_str(&format!("⟦U+{:04X}⟧", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

/// `text` on one line: escape sequences, control and hidden characters removed, runs of
/// whitespace made one space, at most `cap` characters (cut with `…`).
pub fn sanitised_line(text: &str, cap: usize) -> String {
    let stripped =
        crate::gate::strip_for_terminal(&without_hidden(&text.replace(['\n', '\r', '\t'], " ")));
    let words: Vec<&str> = stripped.split_whitespace().collect();
    let joined = words.join(" ");
    if joined.chars().count() <= cap {
        return joined;
    }
    let mut cut: String = joined.chars().take(cap.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

/// `&`, `<` and `>` as entities, so text cannot open or close a label.
pub fn escaped(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}
