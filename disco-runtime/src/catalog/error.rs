use std::fmt;

/// Problems found while building the catalog; each names the definitions involved.
///
/// Its `Debug` form is its `Display` form, one problem a line, so that `check().unwrap()` and
/// a `main` that returns the error print the problems as they read.
#[derive(Clone, PartialEq)]
pub struct CatalogError {
    /// One sentence per problem, naming the tools and where they are defined.
    pub problems: Vec<String>,
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
