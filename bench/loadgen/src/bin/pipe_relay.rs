//! The floor of any stdio gateway: a process between a client and one child server that does
//! nothing but copy each line across, in both directions, and flush it.
//!
//! ```text
//! pipe_relay -- COMMAND [ARGS...]
//! ```
//!
//! No parse, no runtime: one blocking thread per direction. What a call through it costs over a
//! direct one is the second hop alone (two more pipes, two more wake-ups, the kernel's copies),
//! which bench/gateway_bench.py sets beside disco-gateway's figures.
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, ExitCode, Stdio};

/// Copies `from` to `to` a line at a time, flushing each, until either side closes.
fn copy_lines(from: impl std::io::Read, mut to: impl Write) {
    let mut from = BufReader::with_capacity(64 * 1024, from);
    let mut line = Vec::with_capacity(4096);
    loop {
        line.clear();
        match from.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {
                if to.write_all(&line).and_then(|()| to.flush()).is_err() {
                    return;
                }
            }
        }
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let command = match args.first().map(String::as_str) {
        Some("--") => &args[1..],
        _ => &args[..],
    };
    let Some((program, rest)) = command.split_first() else {
        eprintln!("usage: pipe_relay -- COMMAND [ARGS...]");
        return ExitCode::from(2);
    };
    let mut child = match Command::new(program)
        .args(rest)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
    {
        Ok(c) => c,
        Err(e) => {
            eprintln!("pipe_relay: cannot start {program}: {e}");
            return ExitCode::FAILURE;
        }
    };
    let (Some(child_in), Some(child_out)) = (child.stdin.take(), child.stdout.take()) else {
        eprintln!("pipe_relay: the child has no pipes");
        return ExitCode::FAILURE;
    };
    // Client to child; when the client closes, the child's stdin closes with this thread, and
    // the child's end of its stdout ends the copy below. A child that ends first ends the copy
    // too, and the process with it: the thread still reading the client is not waited for.
    std::thread::spawn(move || copy_lines(std::io::stdin().lock(), child_in));
    copy_lines(child_out, std::io::stdout().lock());
    match child.wait() {
        Ok(status) if status.success() => ExitCode::SUCCESS,
        _ => ExitCode::FAILURE,
    }
}
