//! `tool_search`: past 25 MCP tools, the model finds them by what it wants to do. Ranked with
//! BM25 over each tool's name (split into words), title and description.

use std::collections::HashMap;

/// Above this many MCP tools, none is listed and `tool_search` is offered instead.
pub const LISTED_MCP_TOOLS_LIMIT: usize = 25;

/// The most tools one search returns.
pub const MAX_SEARCH_RESULTS: usize = 10;

/// The name of the search tool a model sees.
pub const TOOL_SEARCH_NAME: &str = "tool_search";

/// One searchable tool.
#[derive(Debug, Clone)]
pub struct SearchDocument {
    /// The namespaced name.
    pub name: String,
    /// The words that describe it: name words, title, description.
    pub text: String,
}

/// Lower-case words of `text`: `get_weatherForecast` gives `get`, `weather`, `forecast`.
pub fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut previous_lower = false;
    for c in text.chars() {
        if c.is_alphanumeric() {
            if c.is_uppercase() && previous_lower && !current.is_empty() {
                out.push(std::mem::take(&mut current));
            }
            previous_lower = c.is_lowercase() || c.is_ascii_digit();
            current.extend(c.to_lowercase());
        } else {
            previous_lower = false;
            if !current.is_empty() {
                out.push(std::mem::take(&mut current));
            }
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

/// The names of at most `limit` (≤ [`MAX_SEARCH_RESULTS`]) documents that match `query`, best
/// first; documents that share no word with the query are never returned.
pub fn search(documents: &[SearchDocument], query: &str, limit: usize) -> Vec<String> {
    const K1: f64 = 1.2;
    const B: f64 = 0.75;
    let limit = limit.clamp(1, MAX_SEARCH_RESULTS);
    let tokenised: Vec<Vec<String>> = documents.iter().map(|d| words(&d.text)).collect();
    if tokenised.is_empty() {
        return Vec::new();
    }
    let average = tokenised.iter().map(Vec::len).sum::<usize>() as f64 / tokenised.len() as f64;
    let mut document_frequency: HashMap<&str, usize> = HashMap::new();
    for tokens in &tokenised {
        let mut unique: Vec<&str> = tokens.iter().map(String::as_str).collect();
        unique.sort_unstable();
        unique.dedup();
        for token in unique {
            *document_frequency.entry(token).or_default() += 1;
        }
    }
    let mut query_words = words(query);
    query_words.sort_unstable();
    query_words.dedup();
    let count = tokenised.len() as f64;
    let mut scored: Vec<(f64, usize)> = tokenised
        .iter()
        .enumerate()
        .map(|(index, tokens)| {
            let length = tokens.len() as f64;
            let score: f64 = query_words
                .iter()
                .map(|word| {
                    let frequency = tokens.iter().filter(|t| *t == word).count() as f64;
                    if frequency == 0.0 {
                        return 0.0;
                    }
                    let with_word =
                        document_frequency.get(word.as_str()).copied().unwrap_or(0) as f64;
                    let idf = ((count - with_word + 0.5) / (with_word + 0.5) + 1.0).ln();
                    idf * frequency * (K1 + 1.0)
                        / (frequency + K1 * (1.0 - B + B * length / average.max(1.0)))
                })
                .sum();
            (score, index)
        })
        .filter(|(score, _)| *score > 0.0)
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    scored
        .into_iter()
        .take(limit)
        .map(|(_, index)| documents[index].name.clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_split_into_words() {
        assert_eq!(
            words("get_weatherForecast-now"),
            ["get", "weather", "forecast", "now"]
        );
    }

    #[test]
    fn the_best_match_comes_first_and_strangers_never_appear() {
        let docs = [
            (
                "gh__create_issue",
                "create issue Create a new issue in a repository",
            ),
            (
                "wx__get_weather_forecast",
                "get weather forecast The weather forecast for a city",
            ),
            ("db__query_database", "query database Run a SQL query"),
        ]
        .map(|(name, text)| SearchDocument {
            name: name.into(),
            text: text.into(),
        });
        assert_eq!(
            search(&docs, "weather in a city", 10)[0],
            "wx__get_weather_forecast"
        );
        assert!(search(&docs, "zebra", 10).is_empty());
        assert_eq!(search(&docs, "a", 1).len(), 1);
    }
}
