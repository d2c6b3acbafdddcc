use std::fmt;

/// Why a call could not reach a tool: these become JSON-RPC errors (-32602), not tool results.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum CallError {
    /// No visible tool has this name (after every safe correction).
    UnknownTool {
        /// The name as requested, clipped to 128 characters.
        requested: String,
        /// Visible tools it may have meant, best first (empty when none is close).
        suggestions: Vec<String>,
    },
    /// The request's `arguments` is not a JSON object.
    InvalidParams(String),
}

impl fmt::Display for CallError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CallError::UnknownTool {
                requested,
                suggestions,
            } => {
                write!(f, "Unknown tool: {requested}")?;
                if suggestions.is_empty() {
                    Ok(())
                } else {
                    write!(f, ". Did you mean: {}?", suggestions.join(", "))
                }
            }
            CallError::InvalidParams(msg) => f.write_str(msg),
        }
    }
}

impl std::error::Error for CallError {}
