//! An error and its causes in one line, for messages that must say what actually failed: the
//! Postgres driver shows only its error's kind ("db error") by itself, and an HTTP client's
//! "error sending request" hides the refused connection or bad certificate beneath it.
//! `mcp-tasks-client` uses it too, through `__internal`.

use std::error::Error;

/// `error` and each of its causes, `: `-separated. A cause whose text its wrapper already ends
/// with (wrappers often repeat their cause's message) is not repeated.
pub fn with_causes(error: &dyn Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.ends_with(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::with_causes;
    use std::fmt;

    #[derive(Debug)]
    struct Layer(&'static str, Option<Box<Layer>>);

    impl fmt::Display for Layer {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(self.0)
        }
    }

    impl std::error::Error for Layer {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            self.1.as_deref().map(|l| l as _)
        }
    }

    #[test]
    fn causes_follow_their_wrapper_once() {
        let refused = Layer("Connection refused (os error 111)", None);
        let connect = Layer("tcp connect error", Some(Box::new(refused)));
        let sending = Layer("error sending request", Some(Box::new(connect)));
        assert_eq!(
            with_causes(&sending),
            "error sending request: tcp connect error: Connection refused (os error 111)"
        );
        let repeated = Layer(
            "error connecting to server: Connection refused (os error 111)",
            Some(Box::new(Layer("Connection refused (os error 111)", None))),
        );
        assert_eq!(
            with_causes(&repeated),
            "error connecting to server: Connection refused (os error 111)"
        );
    }
}
