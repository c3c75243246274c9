//! Whole numbers in request bodies, as JSON has them: `5` and `5.0` are the
//! same number (JSON has no integer type), so both are accepted; `5.5`,
//! strings and numbers out of range are not.
use serde::{Deserialize, Deserializer, de::Error};

/// An optional whole number that fits `T`.
pub fn optional<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: TryFrom<i64>,
{
    let Some(number) = Option::<serde_json::Number>::deserialize(deserializer)? else {
        return Ok(None);
    };
    let whole = number.as_i64().or_else(|| {
        number
            .as_f64()
            .filter(|f| f.fract() == 0.0 && f.abs() < 9.0e15)
            .map(|f| f as i64)
    });
    whole
        .and_then(|n| T::try_from(n).ok())
        .map(Some)
        .ok_or_else(|| D::Error::custom(format!("{number} is not a whole number in range")))
}

#[cfg(test)]
mod tests {
    #[derive(serde::Deserialize)]
    struct Count {
        #[serde(default, deserialize_with = "super::optional")]
        count: Option<u32>,
    }

    fn parse(json: &str) -> Result<Option<u32>, serde_json::Error> {
        serde_json::from_str::<Count>(json).map(|c| c.count)
    }

    #[test]
    fn whole_numbers_in_either_spelling() {
        assert_eq!(parse(r#"{"count": 5}"#).unwrap(), Some(5));
        assert_eq!(parse(r#"{"count": 4908.0}"#).unwrap(), Some(4908));
        assert_eq!(parse(r#"{"count": null}"#).unwrap(), None);
        assert_eq!(parse(r#"{}"#).unwrap(), None);
        for bad in [
            r#"{"count": 5.5}"#,
            r#"{"count": -1}"#,
            r#"{"count": "5"}"#,
            r#"{"count": 1e20}"#,
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }
}
