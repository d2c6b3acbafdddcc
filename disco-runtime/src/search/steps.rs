//! Search for a task of several steps (`tool_search`'s `queries`): one ranking per step,
//! merged so that every step gets its best tools before any step gets its second. A step may
//! name its tools instead (`select:name_a,name_b`): those tools are its results, and the steps
//! that search share the room they leave.

use std::collections::HashSet;
use std::hash::Hash;

use super::index::MAX_QUERY_CHARS;

/// At most this many steps in one search: a task a model plans is a handful of steps, and the
/// bound caps the rankings one request can cause (each step's text is cut as a query is, at
/// [`super::index::MAX_QUERY_CHARS`]).
pub const MAX_QUERY_STEPS: usize = 8;

/// A query with this prefix loads tools by name (the convention of Claude Code's tool search).
const SELECT: &str = "select:";

/// What one query of `tool_search` asks: the tools of these names, or a search by these words.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Step<'q> {
    /// `select:name_a,name_b`: the names, trimmed, the empty ones left out, read from the
    /// first [`MAX_QUERY_CHARS`] characters after the prefix (the cap bounds the work one
    /// request can cause, as it does for words).
    Names(Vec<&'q str>),
    /// Anything else: words to search.
    Words(&'q str),
}

impl<'q> Step<'q> {
    pub(crate) fn of(query: &'q str) -> Step<'q> {
        let Some(list) = query.trim_start().strip_prefix(SELECT) else {
            return Step::Words(query);
        };
        let list = match list.char_indices().nth(MAX_QUERY_CHARS) {
            Some((i, _)) => &list[..i],
            None => list,
        };
        Step::Names(
            list.split(',')
                .map(str::trim)
                .filter(|n| !n.is_empty())
                .collect(),
        )
    }
}

/// How many results a search by steps may bring: `given` is what the caller asked for
/// (`max_results`, already within 1..=`most`), `default` the results of a search when the
/// caller does not say, `most` the most a caller may ask for.
#[derive(Clone, Copy, Debug)]
pub(crate) struct StepRoom {
    pub(crate) given: Option<usize>,
    pub(crate) default: usize,
    pub(crate) most: usize,
}

impl StepRoom {
    /// Room for exactly `k` results, whatever the steps.
    pub(crate) fn exactly(k: usize) -> StepRoom {
        StepRoom {
            given: Some(k),
            default: k,
            most: k,
        }
    }

    /// The most tools the naming steps bring together: what the caller asked for, or else
    /// every name asked for (up to `most`), as one `select:` query brings them.
    fn names(self) -> usize {
        self.given.unwrap_or(self.most)
    }

    /// The most results in all, once the naming steps have brought `selected` tools: what the
    /// caller asked for, or else those tools and the default number of results for the
    /// searching steps, but room for the best tool of each of the `searching` steps when they
    /// are more (up to `most`). Only the steps that search count: a naming step has its
    /// tools already.
    fn limit(self, selected: usize, searching: usize) -> usize {
        match self.given {
            Some(k) => k,
            None => selected
                .saturating_add(self.default.max(searching))
                .min(self.most),
        }
    }
}

/// How many names each naming step may look up (`distinct`: how many distinct names each
/// step asks for), so that all the steps together look up no more than `room` names, as one
/// `select:` query does: one name to each step that asks for more, in turn, until the room is
/// used up, so a long list cannot take the room of the steps after it.
fn name_budgets(distinct: &[usize], room: usize) -> Vec<usize> {
    let mut budgets = vec![0; distinct.len()];
    let mut left = room;
    while left > 0 {
        let mut gave = false;
        for (budget, &wanted) in budgets.iter_mut().zip(distinct) {
            if left > 0 && *budget < wanted {
                *budget += 1;
                left -= 1;
                gave = true;
            }
        }
        if !gave {
            break;
        }
    }
    budgets
}

/// What a search by steps found: each tool with the step (its position among the steps) that
/// brought it, and the steps that found nothing.
pub(crate) struct Found<T> {
    pub(crate) tools: Vec<(T, usize)>,
    pub(crate) unanswered: Vec<usize>,
}

/// A search by steps. The naming steps come first: each brings the tools `select` finds for
/// its names (each step looking up its share of [`StepRoom::names`] names, see
/// [`name_budgets`]; balanced over those steps, each tool once, up to [`StepRoom::names`]);
/// then the searching steps share the room left of [`StepRoom::limit`] (possibly none),
/// balanced over their rankings (each asked of `rank` with that limit), skipping the tools
/// the naming steps brought. A step is unanswered when the answer holds none of the tools it
/// found: it found none (no tool has its names, its search finds nothing), or the steps
/// before it took all the room.
pub(crate) fn by_steps<T, K: Eq + Hash>(
    steps: &[Step<'_>],
    room: StepRoom,
    select: impl Fn(&[&str], usize) -> Vec<T>,
    rank: impl Fn(&str, usize) -> Vec<T>,
    key: impl Fn(&T) -> K,
) -> Found<T> {
    let steps = &steps[..steps.len().min(MAX_QUERY_STEPS)];
    let distinct: Vec<usize> = steps
        .iter()
        .map(|step| match step {
            Step::Names(names) => names
                .iter()
                .enumerate()
                .filter(|(i, n)| !names[..*i].contains(n))
                .count(),
            Step::Words(_) => 0,
        })
        .collect();
    let budgets = name_budgets(&distinct, room.names());
    // What each step found, by key: a step is answered when the answer holds one of them.
    let mut found: Vec<Vec<K>> = Vec::with_capacity(steps.len());
    // A searching step's list is empty here; it keeps its place, so its index is its step.
    let named: Vec<Vec<T>> = steps
        .iter()
        .zip(&budgets)
        .map(|(step, &budget)| match step {
            Step::Names(names) if budget > 0 => select(names, budget),
            _ => Vec::new(),
        })
        .inspect(|list| found.push(list.iter().map(&key).collect()))
        .collect();
    let mut tools = balance(named, &key, room.names());
    let searching = steps.iter().filter(|s| matches!(s, Step::Words(_))).count();
    let limit = room.limit(tools.len(), searching);
    let brought: HashSet<K> = tools.iter().map(|(t, _)| key(t)).collect();
    let rankings: Vec<Vec<T>> = steps
        .iter()
        .enumerate()
        .map(|(i, step)| match step {
            Step::Names(_) => Vec::new(),
            Step::Words(query) => {
                let ranked = rank(query, limit);
                found[i] = ranked.iter().map(&key).collect();
                ranked
                    .into_iter()
                    .filter(|t| !brought.contains(&key(t)))
                    .collect()
            }
        })
        .collect();
    let room_left = limit.saturating_sub(tools.len());
    tools.extend(balance(rankings, &key, room_left));
    let answer: HashSet<K> = tools.iter().map(|(t, _)| key(t)).collect();
    let unanswered = (0..steps.len())
        .filter(|&i| !found[i].iter().any(|k| answer.contains(k)))
        .collect();
    Found { tools, unanswered }
}

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
pub(crate) mod tests {
    use std::collections::HashSet;

    use super::{balance, by_steps, Step, StepRoom, MAX_QUERY_CHARS, MAX_QUERY_STEPS};

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

    #[test]
    fn a_step_names_tools_only_after_the_prefix() {
        assert_eq!(
            Step::of(" select: a , b,,a "),
            Step::Names(vec!["a", "b", "a"])
        );
        assert_eq!(Step::of("select:"), Step::Names(vec![]));
        assert_eq!(Step::of("select: , ,"), Step::Names(vec![]));
        assert_eq!(Step::of("Select:a"), Step::Words("Select:a"));
        assert_eq!(Step::of("read select:a"), Step::Words("read select:a"));
        // The names are read from the first characters only, as words are.
        let long = format!("select:a,{}", "é".repeat(2 * MAX_QUERY_CHARS));
        let Step::Names(names) = Step::of(&long) else {
            panic!("names")
        };
        assert_eq!(names[0], "a");
        assert_eq!(names[1].chars().count(), MAX_QUERY_CHARS - 2);
    }

    /// The names each naming step of `steps` may look up, made another way than
    /// [`super::name_budgets`]: all its distinct names when they fit `room`; else every
    /// step's up to the highest level that fits, and one more for the first steps that have
    /// more, to fill the room.
    pub(crate) fn lookups(steps: &[Step<'_>], room: usize) -> Vec<usize> {
        let wanted: Vec<usize> = steps
            .iter()
            .map(|s| match s {
                Step::Names(names) => names.iter().collect::<HashSet<_>>().len(),
                Step::Words(_) => 0,
            })
            .collect();
        let upto = |level: usize| wanted.iter().map(|w| (*w).min(level)).sum::<usize>();
        let most = wanted.iter().copied().max().unwrap_or(0);
        let level = (0..=most)
            .take_while(|&l| upto(l) <= room)
            .last()
            .unwrap_or(0);
        let mut extra = room - upto(level);
        wanted
            .iter()
            .map(|&w| {
                let more = usize::from(w > level && extra > 0);
                extra -= more;
                w.min(level) + more
            })
            .collect()
    }

    /// One generated request: its steps' texts, the ranking of each word query (`q0`..),
    /// the number of tools (`t0`..) and the room.
    struct Request {
        texts: Vec<String>,
        rankings: Vec<Vec<usize>>,
        room: StepRoom,
    }

    fn request(rng: &mut fastrand::Rng) -> Request {
        let tools = rng.usize(1..12);
        let queries = rng.usize(1..6);
        let texts = (0..rng.usize(1..=MAX_QUERY_STEPS + 2))
            .map(|_| {
                if rng.bool() {
                    let names: Vec<String> = (0..rng.usize(0..5))
                        .map(|_| match rng.usize(..5) {
                            0 => "nope".to_string(),
                            _ => format!("t{}", rng.usize(..tools)),
                        })
                        .collect();
                    format!("select:{}", names.join(","))
                } else {
                    format!("q{}", rng.usize(..queries))
                }
            })
            .collect();
        let rankings = (0..queries)
            .map(|_| {
                let mut all: Vec<usize> = (0..tools).collect();
                rng.shuffle(&mut all);
                all.truncate(rng.usize(0..=tools));
                all
            })
            .collect();
        let most = rng.usize(1..10);
        let default = rng.usize(1..=most);
        let given = rng.bool().then(|| rng.usize(1..=most));
        Request {
            texts,
            rankings,
            room: StepRoom {
                given,
                default,
                most,
            },
        }
    }

    /// The rule of a search by steps, on generated requests (random mixes of naming and
    /// searching steps, names that some tool has and names none has, rankings, room): the
    /// naming steps' results come first, each of them a tool its names bring, as many in all
    /// as their names bring up to the room for names; the searching steps share the room the
    /// limit leaves, a limit made from the number of searching steps; each step's results in
    /// its own order, no tool twice, no step two results behind another unless it has
    /// nothing left to bring; unanswered exactly the steps that bring nothing.
    #[test]
    fn naming_steps_bring_their_tools_and_searching_steps_share_the_room_left() {
        let mut rng = fastrand::Rng::with_seed(0x5E1EC7);
        for case in 0..4000 {
            let r = request(&mut rng);
            let steps: Vec<Step<'_>> = r
                .texts
                .iter()
                .take(MAX_QUERY_STEPS)
                .map(|t| Step::of(t))
                .collect();
            // Exact names that a tool has, each once, at most `most`.
            let select = |names: &[&str], most: usize| {
                let mut out: Vec<usize> = Vec::new();
                for n in names {
                    if let Some(t) = n.strip_prefix('t').and_then(|d| d.parse().ok()) {
                        if !out.contains(&t) {
                            out.push(t);
                        }
                    }
                }
                out.truncate(most);
                out
            };
            let rank = |q: &str, k: usize| -> Vec<usize> {
                let i: usize = q[1..].parse().expect("a generated query");
                r.rankings[i].iter().copied().take(k).collect()
            };
            // More steps than a search takes, sometimes: the ones past the bound are ignored.
            let sent: Vec<Step<'_>> = r.texts.iter().map(|t| Step::of(t)).collect();
            let found = by_steps(&sent, r.room, select, rank, |t| *t);
            let why = format!("case {case}: {:?} {:?} {:?}", r.texts, r.rankings, r.room);

            let names_room = r.room.given.unwrap_or(r.room.most);
            let lookups = lookups(&steps, names_room);
            assert!(lookups.iter().sum::<usize>() <= names_room, "{why}");
            let lists: Vec<Vec<usize>> = steps
                .iter()
                .zip(&lookups)
                .map(|(s, &n)| match s {
                    Step::Names(names) => select(names, n),
                    Step::Words(_) => Vec::new(),
                })
                .collect();
            let named: HashSet<usize> = lists.iter().flatten().copied().collect();
            let naming = |i: usize| matches!(steps[i], Step::Names(_));
            let first_searching = found
                .tools
                .iter()
                .position(|(_, step)| !naming(*step))
                .unwrap_or(found.tools.len());
            assert!(
                found.tools[first_searching..]
                    .iter()
                    .all(|(_, s)| !naming(*s)),
                "naming steps first: {why} -> {:?}",
                found.tools
            );
            let brought_by_names = first_searching;
            assert_eq!(brought_by_names, named.len().min(names_room), "{why}");
            let searching = (0..steps.len()).filter(|&i| !naming(i)).count();
            let limit = r.room.given.unwrap_or_else(|| {
                (brought_by_names + r.room.default.max(searching)).min(r.room.most)
            });
            let mut lists = lists;
            for (i, step) in steps.iter().enumerate() {
                if let Step::Words(q) = step {
                    lists[i] = rank(q, limit);
                }
            }
            let searched: HashSet<usize> = lists
                .iter()
                .enumerate()
                .filter(|(i, _)| !naming(*i))
                .flat_map(|(_, l)| l.iter().copied())
                .filter(|t| !found.tools[..brought_by_names].iter().any(|(b, _)| b == t))
                .collect();
            assert_eq!(
                found.tools.len() - brought_by_names,
                searched.len().min(limit - brought_by_names),
                "{why} -> {:?}",
                found.tools
            );
            let all: HashSet<usize> = found.tools.iter().map(|(t, _)| *t).collect();
            assert_eq!(all.len(), found.tools.len(), "no tool twice: {why}");
            let results = |i: usize| -> Vec<usize> {
                found
                    .tools
                    .iter()
                    .filter(|(_, s)| *s == i)
                    .map(|(t, _)| *t)
                    .collect()
            };
            for (i, list) in lists.iter().enumerate() {
                // A step's results are its own list's, in its order.
                let mut rest = list.iter();
                for t in results(i) {
                    assert!(rest.any(|l| *l == t), "step {i} brought {t}: {why}");
                }
                for j in (0..steps.len()).filter(|&j| naming(j) == naming(i)) {
                    if results(i).len() + 1 < results(j).len() {
                        assert!(
                            list.iter().all(|t| all.contains(t)),
                            "step {i} is behind step {j} with tools left: {why} -> {:?}",
                            found.tools
                        );
                    }
                }
            }
            // Unanswered: the steps none of whose tools the answer holds (none found, or
            // no room left).
            let unanswered: Vec<usize> = (0..steps.len())
                .filter(|&i| !lists[i].iter().any(|t| all.contains(t)))
                .collect();
            assert_eq!(found.unanswered, unanswered, "{why}");
        }
    }

    /// The request of the tool's description, `queries: ["select:read_file", "send an
    /// email"]`, and a naming step that takes the whole room the caller gave.
    #[test]
    fn a_naming_step_beside_a_searching_step() {
        let select = |names: &[&str], most: usize| -> Vec<&'static str> {
            let known = ["read_file", "write_file"];
            let mut out: Vec<&'static str> = Vec::new();
            for n in names {
                if let Some(k) = known.iter().find(|k| *k == n) {
                    out.push(k);
                }
            }
            out.truncate(most);
            out
        };
        let rank = |q: &str, k: usize| -> Vec<&'static str> {
            let ranked = match q {
                "send an email" => vec!["send_email", "read_file", "draft_email", "read_inbox"],
                _ => vec![],
            };
            ranked.into_iter().take(k).collect()
        };
        let room = |given| StepRoom {
            given,
            default: 2,
            most: 20,
        };
        let steps = [Step::of("select:read_file"), Step::of("send an email")];
        let found = by_steps(&steps, room(None), select, rank, |t| *t);
        assert_eq!(
            found.tools,
            [("read_file", 0), ("send_email", 1), ("draft_email", 1)]
        );
        assert!(found.unanswered.is_empty());
        // The naming step takes the whole room: the searching step is told it got none.
        let found = by_steps(&steps, room(Some(1)), select, rank, |t| *t);
        assert_eq!(found.tools, [("read_file", 0)]);
        assert_eq!(found.unanswered, [1]);
        let steps = [
            Step::of("select:nope"),
            Step::of("zebra"),
            Step::of("select:write_file,read_file"),
        ];
        let found = by_steps(&steps, room(Some(2)), select, rank, |t| *t);
        assert_eq!(found.tools, [("write_file", 2)]);
        assert_eq!(found.unanswered, [0, 1]);
        // A room of one name: the first naming step looks it up, as `select:nope,write_file`
        // looks up `nope` only.
        let found = by_steps(&steps, room(Some(1)), select, rank, |t| *t);
        assert_eq!(found.tools, []);
        assert_eq!(found.unanswered, [0, 1, 2]);
    }

    /// The largest room there is: the limit saturates instead of overflowing.
    #[test]
    fn the_room_of_the_largest_options_does_not_overflow() {
        let room = StepRoom {
            given: None,
            default: usize::MAX,
            most: usize::MAX,
        };
        let steps = [Step::of("select:read_file"), Step::of("send an email")];
        let found = by_steps(
            &steps,
            room,
            |names: &[&str], most| names.iter().take(most).map(|n| n.to_string()).collect(),
            |_, k| {
                ["send_email", "read_file"]
                    .into_iter()
                    .take(k)
                    .map(String::from)
                    .collect()
            },
            String::clone,
        );
        let names: Vec<(&str, usize)> = found.tools.iter().map(|(t, s)| (t.as_str(), *s)).collect();
        assert_eq!(names, [("read_file", 0), ("send_email", 1)]);
    }

    /// The naming steps together look up no more names than the room for names, each step
    /// in turn one more, whatever the length of the lists.
    #[test]
    fn naming_steps_share_the_names_they_may_look_up() {
        let names: Vec<String> = (0..30).map(|i| format!("n{i}")).collect();
        let long = format!("select:{}", names.join(","));
        let steps = [
            Step::of(&long),
            Step::of("select:a,b"),
            Step::of("words"),
            Step::of(&long),
        ];
        let looked_up = std::cell::RefCell::new(Vec::new());
        let found = by_steps(
            &steps,
            StepRoom::exactly(20),
            |names: &[&str], most| {
                looked_up.borrow_mut().push(most);
                names.iter().take(most).map(|n| n.to_string()).collect()
            },
            |_, _| Vec::new(),
            String::clone,
        );
        assert_eq!(*looked_up.borrow(), [9, 2, 9]);
        assert_eq!(found.tools.len(), 11, "{:?}", found.tools);
        assert_eq!(found.unanswered, [2]);
    }
}
