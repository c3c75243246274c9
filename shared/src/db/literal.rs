//! PostgreSQL statements as one text with their values written in as
//! literals, for the simple query protocol: many statements in one round
//! trip, where the extended protocol (bound values) takes one statement per
//! exchange. A writer that sends a batch of small statements saves the
//! exchanges between them.
//!
//! Only values whose literal is exact and inert are written: text (not
//! holding NUL, which PostgreSQL's text cannot hold and its protocol reads
//! as the text's end), bytes, integers, booleans and NULL. Text is written
//! as an escape string (`E'...'`, whatever `standard_conforming_strings`
//! says) with its every backslash and quote doubled, so nothing in it can
//! end the literal; bytes as their hex digits. Any other value, or a text
//! the statements' own SQL makes unclear (an escape or dollar-quoted
//! string of its own), makes the answer `None`: those statements go with
//! bound values.
use std::fmt::Write;

use sea_orm::sea_query::Values;
use sea_orm::{Statement, Value};

/// The statements as one text with their values written in, each ended
/// by `;`; `None` when a value or a statement cannot be written so.
pub fn literal_text(statements: impl IntoIterator<Item = Statement>) -> Option<String> {
    let mut text = String::new();
    for statement in statements {
        let values = statement.values.as_ref().map_or(&[][..], |Values(v)| v);
        written(&statement.sql, values, &mut text)?;
        text.push_str(";\n");
    }
    Some(text)
}

/// Writes `sql` to `out` with each `$n` outside quotes replaced by the
/// literal of `values[n - 1]`.
fn written(sql: &str, values: &[Value], out: &mut String) -> Option<()> {
    let mut chars = sql.char_indices().peekable();
    // The quote that ends the quoted text we are in.
    let mut quoted: Option<char> = None;
    while let Some((at, c)) = chars.next() {
        match (quoted, c) {
            (Some(q), c) if c == q => quoted = None,
            (Some(_), _) => {}
            (None, '\'') => {
                let escape = sql[..at].ends_with(['E', 'e']);
                if escape {
                    return None;
                }
                quoted = Some('\'');
            }
            (None, '"') => quoted = Some('"'),
            // A comment could hide a quote or a mark from this reading.
            (None, '-' | '/') if sql[at + 1..].starts_with(['-', '*']) => return None,
            (None, '$') => {
                let mut n = 0usize;
                let mut digits = 0;
                while let Some(&(_, d)) = chars.peek() {
                    let Some(d) = d.to_digit(10) else { break };
                    n = n.checked_mul(10)?.checked_add(d as usize)?;
                    digits += 1;
                    chars.next();
                }
                if digits == 0 {
                    // A dollar-quoted string, or an identifier's `$`.
                    return None;
                }
                literal(values.get(n.checked_sub(1)?)?, out)?;
                continue;
            }
            (None, _) => {}
        }
        out.push(c);
    }
    quoted.is_none().then_some(())
}

/// Writes `value`'s literal to `out`.
fn literal(value: &Value, out: &mut String) -> Option<()> {
    macro_rules! number {
        ($n:expr) => {
            match $n {
                Some(n) => write!(out, "({n})").ok(),
                None => word("NULL", out),
            }
        };
    }
    match value {
        Value::Bool(b) => match b {
            Some(b) => word(if *b { "TRUE" } else { "FALSE" }, out),
            None => word("NULL", out),
        },
        Value::TinyInt(n) => number!(n),
        Value::SmallInt(n) => number!(n),
        Value::Int(n) => number!(n),
        Value::BigInt(n) => number!(n),
        Value::TinyUnsigned(n) => number!(n),
        Value::SmallUnsigned(n) => number!(n),
        Value::Unsigned(n) => number!(n),
        Value::BigUnsigned(n) => number!(n),
        Value::String(s) => match s {
            Some(s) => text(s, out),
            None => word("NULL", out),
        },
        Value::Char(c) => match c {
            Some(c) => text(c.encode_utf8(&mut [0; 4]), out),
            None => word("NULL", out),
        },
        Value::Bytes(b) => match b {
            Some(b) => {
                // bytea's hex form: `\x` (the backslash doubled in an
                // escape string) and two hex digits a byte.
                out.push_str("E'\\\\x");
                for byte in b {
                    write!(out, "{byte:02x}").ok()?;
                }
                out.push_str("'::bytea");
                Some(())
            }
            None => word("NULL", out),
        },
        _ => None,
    }
}

fn word(word: &str, out: &mut String) -> Option<()> {
    out.push_str(word);
    Some(())
}

/// `s` as an escape string: every backslash and quote doubled.
fn text(s: &str, out: &mut String) -> Option<()> {
    if s.contains('\0') {
        return None;
    }
    out.push_str("E'");
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("''"),
            c => out.push(c),
        }
    }
    out.push('\'');
    Some(())
}

#[cfg(test)]
mod tests {
    use sea_orm::DbBackend;

    use super::*;

    fn statement(sql: &str, values: Vec<Value>) -> Statement {
        Statement::from_sql_and_values(DbBackend::Postgres, sql, values)
    }

    #[test]
    fn values_are_written_in_place_of_their_marks() {
        let one = statement(
            r#"INSERT INTO "t" ("a", "b", "c", "d") VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING"#,
            vec![
                Value::from("it's a \\ test"),
                Value::from(vec![0u8, 0xab, 0x27]),
                Value::from(-5i64),
                Value::String(None),
            ],
        );
        let two = statement(
            "UPDATE t SET a = $2 WHERE b = $1",
            vec![Value::from(7i32), Value::from(true)],
        );
        let three = Statement::from_string(DbBackend::Postgres, "COMMIT");
        assert_eq!(
            literal_text([one, two, three]).as_deref(),
            Some(concat!(
                r#"INSERT INTO "t" ("a", "b", "c", "d") VALUES (E'it''s a \\ test', E'\\x00ab27'::bytea, (-5), NULL) ON CONFLICT DO NOTHING;"#,
                "\nUPDATE t SET a = TRUE WHERE b = (7);\nCOMMIT;\n"
            ))
        );
    }

    #[test]
    fn marks_inside_quotes_are_text() {
        let s = statement(
            r#"SELECT '$1', "$1" FROM t WHERE a = $1"#,
            vec![Value::from("x")],
        );
        assert_eq!(
            literal_text([s]).as_deref(),
            Some(r#"SELECT '$1', "$1" FROM t WHERE a = E'x';"#.to_owned() + "\n").as_deref()
        );
    }

    #[test]
    fn what_cannot_be_written_exactly_is_refused() {
        let refused = [
            statement("SELECT $1", vec![Value::from("nul \0 inside")]),
            statement("SELECT $1", vec![Value::from(1.5f64)]),
            statement("SELECT $2", vec![Value::from(1)]),
            statement("SELECT $0", vec![Value::from(1)]),
            statement("SELECT E'\\'' || $1", vec![Value::from(1)]),
            statement("SELECT $$ $1 $$", vec![Value::from(1)]),
            statement("SELECT 'open", vec![]),
            statement("SELECT $1 -- it's", vec![Value::from(1)]),
            statement("SELECT $1 /* it's */", vec![Value::from(1)]),
        ];
        for s in refused {
            let sql = s.sql.clone();
            assert_eq!(literal_text([s]), None, "{sql}");
        }
    }
}
