use std::fmt;

/// Problems found while building the catalog; each names the definitions involved.
///
/// Its `Debug` form is its `Display` form, one problem a line, so that `check().unwrap()` and
/// a `main` that returns the error print the problems as they read.
#[derive(Clone, PartialEq, Eq)]
pub struct CatalogError {
    problems: Vec<CatalogProblem>,
}

impl CatalogError {
    pub(crate) fn new(problems: Vec<CatalogProblem>) -> Self {
        CatalogError { problems }
    }

    /// Every problem, in the order found: each tool's own first, in name order, then the
    /// conflicts across tools.
    pub fn problems(&self) -> &[CatalogProblem] {
        &self.problems
    }

    /// The problems, owned.
    pub fn into_problems(self) -> Vec<CatalogProblem> {
        self.problems
    }
}

/// One problem that stops a catalog from being built. Its `Display` form is one sentence
/// naming the tools and where they are defined.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum CatalogProblem {
    /// A tool takes a `State<T>` the server did not register.
    #[non_exhaustive]
    MissingState {
        /// The tool's name.
        tool: String,
        /// Where it is declared (`module::function (file:line)`).
        origin: String,
        /// The state's type, as written.
        state: String,
        /// The types of the state that was registered, sorted.
        registered: Vec<String>,
    },
    /// A `#[mcp_tool]` function could not be made a tool (a default that does not fit its
    /// parameter's type, a schema that does not compile).
    #[non_exhaustive]
    InvalidTool {
        /// The tool's name.
        tool: String,
        /// Where it is declared.
        origin: String,
        /// Why.
        error: String,
    },
    /// A provider's tool could not be made a tool (an invalid group, a schema that is not a
    /// JSON object).
    #[non_exhaustive]
    InvalidProviderTool {
        /// The tool's name as the provider gave it (clipped to 128 characters).
        tool: String,
        /// Why.
        error: String,
    },
    /// One name or alias claimed twice.
    #[non_exhaustive]
    DuplicateName {
        /// The name or alias both claim.
        name: String,
        /// The claim seen first.
        first: NameClaim,
        /// The claim that conflicts with it.
        second: NameClaim,
    },
    /// A tool pinned to tools/list (`Exposure::SearchFirst`) that no tool is.
    #[non_exhaustive]
    PinnedMissing {
        /// The pinned name.
        name: String,
    },
    /// A search meta-tool could not be made from the search options.
    #[non_exhaustive]
    MetaTool {
        /// Why.
        error: String,
    },
}

/// Which definition claims a name, in a [`CatalogProblem::DuplicateName`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum NameClaim {
    /// The tool's own name.
    #[non_exhaustive]
    Name {
        /// The tool's name.
        tool: String,
        /// Where it is declared.
        origin: String,
    },
    /// One of the tool's aliases.
    #[non_exhaustive]
    Alias {
        /// The tool's name.
        tool: String,
        /// Where it is declared.
        origin: String,
    },
    /// The name of a search meta-tool (`tool_search`, `execute_tool`).
    MetaTool,
}

impl fmt::Display for NameClaim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NameClaim::Name { tool, origin } => write!(f, "the name of tool `{tool}` at {origin}"),
            NameClaim::Alias { tool, origin } => write!(f, "an alias of tool `{tool}` at {origin}"),
            NameClaim::MetaTool => f.write_str("the name of a search meta-tool"),
        }
    }
}

impl fmt::Display for CatalogProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CatalogProblem::MissingState {
                tool,
                origin,
                state,
                registered,
            } => {
                write!(
                    f,
                    "tool `{tool}` at {origin} takes `State<{state}>`, but the server has no \
                     state of type `{state}`: register it with `.with_state(...)`"
                )?;
                // `with_state(Arc::new(x))` registers an `Arc<T>`, a type of its own.
                let arc = format!("alloc::sync::Arc<{state}>");
                if registered.contains(&arc) {
                    write!(
                        f,
                        "; a state of type `Arc<{state}>` is registered, which `State<{state}>` \
                         does not take: `State<T>` already shares its value behind an `Arc`, so \
                         register the value itself, or take `State<Arc<{state}>>`"
                    )?;
                }
                match registered.as_slice() {
                    [] => write!(f, " (no state is registered)"),
                    types => write!(f, " (registered: `{}`)", types.join("`, `")),
                }
            }
            CatalogProblem::InvalidTool {
                tool,
                origin,
                error,
            } => write!(f, "tool `{tool}` at {origin}: {error}"),
            CatalogProblem::InvalidProviderTool { tool, error } => {
                write!(f, "provider tool `{tool}`: {error}")
            }
            CatalogProblem::DuplicateName {
                name,
                first,
                second,
            } => write!(f, "`{name}` is {first} and {second}"),
            CatalogProblem::PinnedMissing { name } => {
                write!(f, "pinned tool `{name}` is not in the catalog")
            }
            CatalogProblem::MetaTool { error } => write!(f, "a search meta-tool: {error}"),
        }
    }
}

impl fmt::Debug for CatalogError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl fmt::Display for CatalogError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "the tool catalog has {} problem(s):",
            self.problems.len()
        )?;
        for p in &self.problems {
            writeln!(f, "- {p}")?;
        }
        Ok(())
    }
}

impl std::error::Error for CatalogError {}
