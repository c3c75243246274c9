//! `literal_text` on PostgreSQL: whatever a value holds (quotes,
//! backslashes, SQL of its own, every byte), the statements written with
//! their values as literals store exactly what bound values store.
use parley_shared::db::literal::literal_text;
use parley_shared::db::testing::TestDb;
use sea_orm::sqlx::{self, AssertSqlSafe};
use sea_orm::{ConnectionTrait, DbBackend, Statement, Value};

/// Texts made of the characters that end or change a literal elsewhere,
/// and some of their own.
fn hostile_texts() -> Vec<String> {
    let mut texts: Vec<String> = [
        "",
        "'",
        "''",
        "\\",
        "\\'",
        "'); DROP TABLE samples; --",
        "E'\\x00'",
        "$1 $$ $2$",
        "a\nb\tc\r",
        "/* */ -- ;",
        "é 😀 \u{202e}",
    ]
    .map(String::from)
    .to_vec();
    let alphabet = [
        '\'', '\\', '"', '$', ';', '-', 'E', 'x', '\n', 'é', '😀', '1',
    ];
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    for _ in 0..300 {
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        let len = (seed >> 59) as usize;
        let text = (0..len)
            .map(|i| alphabet[(seed.rotate_right(i as u32 * 5) % alphabet.len() as u64) as usize])
            .collect();
        texts.push(text);
    }
    texts
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn values_written_as_literals_store_exactly_what_bound_values_store() {
    let fixture = TestDb::postgres().await;
    let conn = fixture.db.conn();
    conn.execute_unprepared(
        "CREATE TABLE samples (id bigint PRIMARY KEY, t text, b bytea, n bigint, f boolean)",
    )
    .await
    .expect("table");
    let texts = hostile_texts();
    let every_byte: Vec<u8> = (0..=255).collect();
    let numbers = [i64::MIN, -1, 0, 1, i64::MAX];
    let insert = "INSERT INTO samples (id, t, b, n, f) VALUES ($1, $2, $3, $4, $5)";
    let statements = texts.iter().enumerate().map(|(i, t)| {
        let values = [
            Value::from(i as i64),
            Value::from(t.as_str()),
            Value::from(every_byte[i % 7..].to_vec()),
            Value::from(numbers[i % numbers.len()]),
            Value::from(i.is_multiple_of(2)),
        ];
        Statement::from_sql_and_values(DbBackend::Postgres, insert, values)
    });
    let text = literal_text(statements).expect("every value has a literal");
    let pool = conn.get_postgres_connection_pool();
    sqlx::raw_sql(AssertSqlSafe(text))
        .execute(pool)
        .await
        .expect("one exchange stores them all");

    let stored: Vec<(i64, String, Vec<u8>, i64, bool)> =
        sqlx::query_as("SELECT id, t, b, n, f FROM samples ORDER BY id")
            .fetch_all(pool)
            .await
            .expect("read back");
    assert_eq!(stored.len(), texts.len(), "no statement swallowed another");
    for (id, t, b, n, f) in stored {
        let i = id as usize;
        assert_eq!(t, texts[i], "text {i}");
        assert_eq!(b, every_byte[i % 7..], "bytes {i}");
        assert_eq!(n, numbers[i % numbers.len()], "number {i}");
        assert_eq!(f, i.is_multiple_of(2), "boolean {i}");
    }
    fixture.finish().await;
}
