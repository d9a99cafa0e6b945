//! stdout, for results: written through [`outln!`] and [`out!`], which end the command quietly
//! when the reader has gone (`mcp-tasks tools | head -1`) instead of panicking as `println!`
//! does on a broken pipe. Nothing more can be delivered then, so the command exits at once
//! (code 0, as the reader chose to stop reading); a stdio server sees its stdin close and ends.

use std::io::Write;

/// Writes `text` to stdout; on a closed stdout, exits.
pub fn write_stdout(text: std::fmt::Arguments<'_>) {
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = stdout.write_fmt(text).and_then(|()| stdout.flush()) {
        gone(&e);
    }
}

/// Writes raw bytes to stdout; on a closed stdout, exits.
pub fn write_bytes(bytes: &[u8]) {
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = stdout.write_all(bytes).and_then(|()| stdout.flush()) {
        gone(&e);
    }
}

/// stdout cannot take more: a reader that closed early exits 0 in silence; any other error
/// (a full disk) is said on stderr, exit 2.
fn gone(e: &std::io::Error) -> ! {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        std::process::exit(0);
    }
    let _ = writeln!(std::io::stderr(), "mcp-tasks: cannot write to stdout: {e}");
    std::process::exit(2);
}

/// `println!` for results (see the module).
macro_rules! outln {
    () => {
        $crate::out::write_stdout(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::out::write_stdout(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// `print!` for results (see the module).
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::out::write_stdout(format_args!($($arg)*))
    };
}

pub(crate) use {out, outln};
