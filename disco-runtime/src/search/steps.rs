//! Search for a task of several steps (`tool_search`'s `queries`): one ranking per step,
//! merged so that every step gets its best tools before any step gets its second.

use std::collections::HashSet;
use std::hash::Hash;

/// At most this many steps in one search: a task a model plans is a handful of steps, and the
/// bound caps the rankings one request can cause (each step's text is cut as a query is, at
/// [`super::index::MAX_QUERY_CHARS`]).
pub const MAX_QUERY_STEPS: usize = 8;

/// Round-robin over the steps' rankings (each best first): the first of every step, then the
/// second of every step, and so on, skipping what an earlier step already brought, up to
/// `max_results`. Each result comes with the step (its position in `rankings`) that brought it.
pub(crate) fn balance<T, K: Eq + Hash>(
    rankings: Vec<Vec<T>>,
    key: impl Fn(&T) -> K,
    max_results: usize,
) -> Vec<(T, usize)> {
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    let mut lists: Vec<_> = rankings.into_iter().map(Vec::into_iter).collect();
    while out.len() < max_results {
        let mut any = false;
        for (step, list) in lists.iter_mut().enumerate() {
            if out.len() >= max_results {
                break;
            }
            // The step's next result that no step has brought yet.
            for item in list.by_ref() {
                any = true;
                if seen.insert(key(&item)) {
                    out.push((item, step));
                    break;
                }
            }
        }
        if !any {
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::balance;

    #[test]
    fn every_step_gets_its_best_before_any_gets_its_second() {
        let r = balance(vec![vec!["a", "b", "c"], vec!["x", "y"]], |s| *s, 4);
        assert_eq!(r, [("a", 0), ("x", 1), ("b", 0), ("y", 1)]);
    }

    #[test]
    fn a_tool_two_steps_find_comes_once_and_the_later_step_takes_its_next() {
        let r = balance(vec![vec!["a", "b"], vec!["a", "c"]], |s| *s, 5);
        assert_eq!(r, [("a", 0), ("c", 1), ("b", 0)]);
    }

    #[test]
    fn a_step_that_finds_nothing_leaves_the_room_to_the_others() {
        let r = balance(vec![vec![], vec!["x", "y", "z"]], |s: &&str| *s, 2);
        assert_eq!(r, [("x", 1), ("y", 1)]);
        let none: Vec<(&str, usize)> = balance(vec![vec![], vec![]], |s: &&str| *s, 3);
        assert!(none.is_empty());
        assert!(balance(vec![vec!["a"]], |s| *s, 0).is_empty());
    }
}
