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
        let mut used = 0;
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

    /// The notice when skills were left out, else `None`.
    pub fn notice(&self) -> Option<String> {
        (!self.left_out.is_empty()).then(|| {
            format!(
                "{} skill(s) were left out of this list to fit its {}-character budget ({}); the skill tool still loads them by name",
                self.left_out.len(),
                self.budget,
                self.left_out.join(", ")
            )
        })
    }

    /// The catalogue as the model reads it: one `<skill>` line each inside `<available_skills>`,
    /// then the notice.
    pub fn text(&self) -> String {
        let mut text = String::from("<available_skills>\n");
        for entry in &self.entries {
            text.push_str(&entry_line(entry));
        }
        text.push_str("</available_skills>\n");
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

/// `text` on one line: escape sequences and control characters removed, runs of whitespace made
/// one space, at most `cap` characters (cut with `…`).
pub fn sanitised_line(text: &str, cap: usize) -> String {
    let stripped = crate::gate::strip_for_terminal(&text.replace(['\n', '\r', '\t'], " "));
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
