//! Statements sent to SQLite as one call: each of its calls is a hand-off
//! to the connection's own thread and back, so a writer that has several
//! statements to run sends them together.
use sea_orm::Statement;
use sea_orm::sea_query::Values;

/// Statements as one text, their values in order: SQLite binds a call's
/// values across its statements, each taking as many as it has marks.
pub fn joined(statements: impl IntoIterator<Item = Statement>) -> Option<Statement> {
    let mut statements = statements.into_iter().peekable();
    let backend = statements.peek()?.db_backend;
    let mut sql = String::new();
    let mut values = Vec::new();
    for s in statements {
        if !sql.is_empty() {
            sql.push_str(";\n");
        }
        sql.push_str(&s.sql);
        if let Some(Values(v)) = s.values {
            values.extend(v);
        }
    }
    Some(Statement::from_sql_and_values(backend, sql, values))
}

#[cfg(test)]
mod tests {
    use sea_orm::{DbBackend, Value};

    use super::*;

    #[test]
    fn statements_join_with_their_values_in_order() {
        let one = Statement::from_sql_and_values(DbBackend::Sqlite, "SELECT ?", [Value::from(1)]);
        let two = Statement::from_string(DbBackend::Sqlite, "COMMIT");
        let three = Statement::from_sql_and_values(
            DbBackend::Sqlite,
            "DELETE FROM t WHERE a = ? AND b = ?",
            [Value::from("x"), Value::from(2)],
        );
        let all = joined([one, two, three]).expect("three statements");
        assert_eq!(
            all.sql,
            "SELECT ?;\nCOMMIT;\nDELETE FROM t WHERE a = ? AND b = ?"
        );
        assert_eq!(
            all.values.map(|v| v.0),
            Some(vec![Value::from(1), Value::from("x"), Value::from(2)])
        );
        assert!(joined(Vec::new()).is_none());
    }
}
