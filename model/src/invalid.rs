//! Why a value a customer gave is not one of the model's: the API answers it
//! with a 400 and this message.
use std::fmt;

/// A malformed value, with a message that names the field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invalid {
    pub message: String,
}

impl Invalid {
    pub fn new(message: impl Into<String>) -> Invalid {
        Invalid {
            message: message.into(),
        }
    }
}

impl fmt::Display for Invalid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Invalid {}
