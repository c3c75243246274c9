//! Secrets stay out of `Debug` output (and so out of logs and panics): the
//! types that hold a token, a key or a secret print it as `<redacted>`.

/// Prints as `<redacted>`, whatever it wraps.
pub struct Redacted<'a, T: ?Sized>(pub &'a T);

impl<T: ?Sized> std::fmt::Debug for Redacted<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("<redacted>")
    }
}

/// Implements `Debug` for a struct: the fields before `;` as usual, those
/// after it as `<redacted>`. Every field must be named (a new field that is
/// not is a compile error), so a secret cannot slip in unnoticed.
#[macro_export]
macro_rules! debug_redacted {
    ($ty:ident { $($shown:ident),* $(,)? ; $($hidden:ident),+ $(,)? }) => {
        impl ::std::fmt::Debug for $ty {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                let $ty { $($shown,)* $($hidden,)+ } = self;
                f.debug_struct(stringify!($ty))
                    $(.field(stringify!($shown), $shown))*
                    $(.field(stringify!($hidden), &$crate::redact::Redacted($hidden)))+
                    .finish()
            }
        }
    };
}

#[cfg(test)]
mod tests {
    struct Login {
        user: String,
        password: String,
    }
    debug_redacted!(Login { user; password });

    #[test]
    fn hidden_fields_never_print() {
        let login = Login {
            user: "ann".into(),
            password: "hunter2-hunter2".into(),
        };
        let shown = format!("{login:?} {login:#?}");
        assert!(shown.contains("ann"), "{shown}");
        assert!(shown.contains("<redacted>"), "{shown}");
        assert!(!shown.contains("hunter2"), "{shown}");
    }
}
