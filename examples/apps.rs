//! Three small apps in one server: notes, a to-do list and a unit converter. Their
//! descriptions say when to pick each tool rather than its neighbours, which is what lets a
//! model choose well among eleven similar tools.
//!
//! ```text
//! cargo run --example apps                           # stdio
//! cargo run --example apps -- --http 127.0.0.1:8080  # Streamable HTTP at /mcp
//! ```

use std::collections::BTreeMap;
use std::sync::Mutex;

use disco_runtime::{mcp_tool, Json, Server, State, ToolError};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Default)]
struct Apps {
    notes: Mutex<BTreeMap<u32, Note>>,
    todos: Mutex<BTreeMap<u32, Todo>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

// ---------------------------------------------------------------- notes

#[derive(Clone, Serialize, JsonSchema)]
struct Note {
    id: u32,
    title: String,
    body: String,
}

/// Write a new note: free-form text the user wants to keep.
///
/// Pick this for information to remember (ideas, meeting minutes, facts). For something the
/// user must *do*, use `add_todo` instead. Returns the note with its id.
///
/// # Arguments
/// * `title` - a short title
/// * `body` - the text of the note
#[mcp_tool(
    destructive = false,
    aliases("create_note", "new_note"),
    keywords("write", "remember")
)]
fn add_note(apps: State<Apps>, title: String, body: String) -> Json<Note> {
    let mut notes = lock(&apps.notes);
    let id = notes.keys().next_back().map_or(1, |k| k + 1);
    let note = Note { id, title, body };
    notes.insert(id, note.clone());
    Json(note)
}

/// List every note's id and title, newest last.
///
/// Pick this to see what notes exist; to find notes about a topic use `search_notes`, and to
/// read one note in full use `read_note`.
#[mcp_tool(read_only, aliases("list_note"), keywords("all notes", "show"))]
fn list_notes(apps: State<Apps>) -> Json<Vec<Note>> {
    Json(lock(&apps.notes).values().cloned().collect())
}

/// Find notes whose title or text contains the given words (case-insensitive).
///
/// Pick this when the user asks what they wrote about something. Returns matching notes in
/// full, oldest first; an empty list when nothing matches.
///
/// # Arguments
/// * `query` - words to look for
#[mcp_tool(
    read_only,
    keywords("find", "wrote", "write about"),
    params(query(alias = "text", alias = "q"))
)]
fn search_notes(apps: State<Apps>, query: String) -> Json<Vec<Note>> {
    let q = query.to_lowercase();
    Json(
        lock(&apps.notes)
            .values()
            .filter(|n| n.title.to_lowercase().contains(&q) || n.body.to_lowercase().contains(&q))
            .cloned()
            .collect(),
    )
}

/// Read one note in full by its id.
///
/// Returns the note's id, title and whole text. Pick this when you know which note you want;
/// to find one, use `list_notes` or `search_notes` first.
///
/// # Arguments
/// * `id` - the note's id, from `add_note`, `list_notes` or `search_notes`
#[mcp_tool(read_only, aliases("get_note"))]
fn read_note(apps: State<Apps>, id: u32) -> Result<Json<Note>, ToolError> {
    lock(&apps.notes)
        .get(&id)
        .cloned()
        .map(Json)
        .ok_or_else(|| ToolError::new(format!("there is no note {id}; use list_notes to see ids")))
}

// ---------------------------------------------------------------- to-do

#[derive(Clone, Serialize, JsonSchema)]
struct Todo {
    id: u32,
    task: String,
    done: bool,
    due: Option<String>,
}

/// Add a task to the to-do list.
///
/// Pick this for something the user must do; for information to keep, use `add_note`.
/// Returns the task with its id, not yet done.
///
/// # Arguments
/// * `task` - what has to be done
/// * `due` - when it is due, as the user said it (e.g. `2026-12-01` or `friday`)
#[mcp_tool(
    destructive = false,
    aliases("create_todo", "add_task"),
    keywords("task", "reminder")
)]
fn add_todo(apps: State<Apps>, task: String, due: Option<String>) -> Json<Todo> {
    let mut todos = lock(&apps.todos);
    let id = todos.keys().next_back().map_or(1, |k| k + 1);
    let todo = Todo {
        id,
        task,
        done: false,
        due,
    };
    todos.insert(id, todo.clone());
    Json(todo)
}

/// List the tasks on the to-do list.
///
/// Returns open tasks with their ids and due dates, oldest first; set `include_done` to see
/// finished ones too. Pick this to see what is left to do; to add a task use `add_todo`.
///
/// # Arguments
/// * `include_done` - also list tasks already marked done
#[mcp_tool(read_only, aliases("list_tasks", "list_todo"))]
fn list_todos(apps: State<Apps>, #[param(default = false)] include_done: bool) -> Json<Vec<Todo>> {
    Json(
        lock(&apps.todos)
            .values()
            .filter(|t| include_done || !t.done)
            .cloned()
            .collect(),
    )
}

/// Mark a task as done. It stays on the list (see `list_todos` with `include_done`).
///
/// Pick this when the user finished a task; to drop a task that will never be done, use
/// `delete_todo`. Returns the task, now marked done.
///
/// # Arguments
/// * `id` - the task's id
#[mcp_tool(idempotent, destructive = false, aliases("finish_task", "mark_done"))]
fn complete_todo(apps: State<Apps>, id: u32) -> Result<Json<Todo>, ToolError> {
    let mut todos = lock(&apps.todos);
    let todo = todos.get_mut(&id).ok_or_else(|| {
        ToolError::new(format!("there is no task {id}; use list_todos to see ids"))
    })?;
    todo.done = true;
    Ok(Json(todo.clone()))
}

/// Delete a task from the to-do list for good.
///
/// Pick this only when the user wants a task gone; a finished task should be marked with
/// `complete_todo` instead. Returns what was deleted.
///
/// # Arguments
/// * `id` - the task's id
#[mcp_tool(destructive, idempotent, aliases("remove_todo"))]
fn delete_todo(apps: State<Apps>, id: u32) -> Result<Json<Todo>, ToolError> {
    lock(&apps.todos)
        .remove(&id)
        .map(Json)
        .ok_or_else(|| ToolError::new(format!("there is no task {id}")))
}

// ---------------------------------------------------------------- converter

#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
enum LengthUnit {
    Mm,
    Cm,
    M,
    Km,
    In,
    Ft,
    Mi,
}

impl LengthUnit {
    fn metres(self) -> f64 {
        match self {
            LengthUnit::Mm => 0.001,
            LengthUnit::Cm => 0.01,
            LengthUnit::M => 1.0,
            LengthUnit::Km => 1000.0,
            LengthUnit::In => 0.0254,
            LengthUnit::Ft => 0.3048,
            LengthUnit::Mi => 1609.344,
        }
    }
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
enum MassUnit {
    G,
    Kg,
    Oz,
    Lb,
}

impl MassUnit {
    fn grams(self) -> f64 {
        match self {
            MassUnit::G => 1.0,
            MassUnit::Kg => 1000.0,
            MassUnit::Oz => 28.349_523_125,
            MassUnit::Lb => 453.592_37,
        }
    }
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
enum TemperatureUnit {
    C,
    F,
    K,
}

/// A converted quantity.
#[derive(Serialize, JsonSchema)]
struct Converted {
    value: f64,
    unit: String,
}

/// Convert a length or distance between metric and imperial units (mm, cm, m, km, in, ft, mi).
///
/// Returns the converted value and its unit. For weights use `convert_mass`; for temperatures
/// use `convert_temperature`.
///
/// # Arguments
/// * `value` - the number to convert
/// * `from` - the unit it is in
/// * `to` - the unit wanted
#[mcp_tool(
    read_only,
    aliases("convert_distance"),
    keywords(
        "units",
        "length",
        "distance",
        "metres",
        "kilometres",
        "miles",
        "feet",
        "inches"
    )
)]
fn convert_length(value: f64, from: LengthUnit, to: LengthUnit) -> Json<Converted> {
    Json(Converted {
        value: value * from.metres() / to.metres(),
        unit: format!("{to:?}").to_lowercase(),
    })
}

/// Convert a weight between g, kg, oz and lb.
///
/// Returns the converted value and its unit. For lengths use `convert_length`; for
/// temperatures use `convert_temperature`.
///
/// # Arguments
/// * `value` - the number to convert
/// * `from` - the unit it is in
/// * `to` - the unit wanted
#[mcp_tool(
    read_only,
    aliases("convert_weight"),
    keywords("units", "weight", "grams", "kilograms", "pounds", "ounces")
)]
fn convert_mass(value: f64, from: MassUnit, to: MassUnit) -> Json<Converted> {
    Json(Converted {
        value: value * from.grams() / to.grams(),
        unit: format!("{to:?}").to_lowercase(),
    })
}

/// Convert a temperature between Celsius (`C`), Fahrenheit (`F`) and Kelvin (`K`).
///
/// Returns the converted value and its scale; fails for temperatures below absolute zero. For
/// lengths use `convert_length`; for weights use `convert_mass`.
///
/// # Arguments
/// * `value` - the temperature to convert
/// * `from` - the scale it is in
/// * `to` - the scale wanted
#[mcp_tool(read_only, keywords("units", "celsius", "fahrenheit"))]
fn convert_temperature(
    value: f64,
    from: TemperatureUnit,
    to: TemperatureUnit,
) -> Result<Json<Converted>, ToolError> {
    let kelvin = match from {
        TemperatureUnit::C => value + 273.15,
        TemperatureUnit::F => (value - 32.0) * 5.0 / 9.0 + 273.15,
        TemperatureUnit::K => value,
    };
    if kelvin < 0.0 {
        return Err(ToolError::new(format!(
            "{value} {from:?} is below absolute zero"
        )));
    }
    let out = match to {
        TemperatureUnit::C => kelvin - 273.15,
        TemperatureUnit::F => (kelvin - 273.15) * 9.0 / 5.0 + 32.0,
        TemperatureUnit::K => kelvin,
    };
    Ok(Json(Converted {
        value: out,
        unit: format!("{to:?}"),
    }))
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let server = Server::from_inventory()
        .name("apps")
        .instructions(
            "Notes keep information, the to-do list tracks tasks to do, and the converter \
             converts lengths, masses and temperatures.",
        )
        .with_state(Apps::default());
    match args.iter().position(|a| a == "--http") {
        Some(i) => {
            let addr = args
                .get(i + 1)
                .ok_or("--http needs an address, e.g. 127.0.0.1:8080")?;
            server
                .serve_http(addr.parse::<std::net::SocketAddr>()?)
                .await?
        }
        None => server.serve_stdio().await?,
    }
    Ok(())
}
