/// How the user answered an elicitation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ElicitOutcome<T> {
    /// The user submitted the form.
    Accept(T),
    /// The user said no.
    Decline,
    /// The user dismissed the request without choosing.
    Cancel,
}

impl<T> ElicitOutcome<T> {
    /// The accepted value, if any.
    pub fn accepted(self) -> Option<T> {
        match self {
            ElicitOutcome::Accept(v) => Some(v),
            _ => None,
        }
    }
}
