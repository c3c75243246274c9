//! The Redis lease store: one key per lease (`{prefix}:{key}` = `holder|token|fence`),
//! a fencing counter per key (`{prefix}:{key}:fence`), one key per live member,
//! and the store's epoch (`{prefix}:epoch`), which tells a Redis that lost its
//! data (restarted without persistence, flushed) from leases that expired.
use std::sync::{Arc, LazyLock, Mutex, PoisonError};
use std::time::Duration;

use async_trait::async_trait;
use futures::TryStreamExt;
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::{AsyncCommands, ScanOptions, Script};

use super::{Gone, Lease, LeaseError, Leases, Member};

const TIMEOUT: Duration = Duration::from_secs(2);
const HEALTH_TIMEOUT: Duration = Duration::from_secs(1);

/// The store's epoch, shared by the scripts below: `{prefix}:epoch` holds
/// `<id>|<reset ms>`, made anew when the store has lost its data. A handle
/// that saw another epoch before (ARGV `seen`) marks the new one as a reset at
/// Redis's own time, so claims wait while live owners take their leases back.
const EPOCH: &str = r"local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function epoch_of(key, seen, fresh, now)
  local m = redis.call('GET', key)
  local id, reset
  if m then
    local sep = string.find(m, '|', 1, true)
    id = string.sub(m, 1, sep - 1)
    reset = tonumber(string.sub(m, sep + 1))
  else
    id = fresh
    reset = 0
    if seen ~= '' then reset = now end
    redis.call('SET', key, id .. '|' .. string.format('%d', reset))
  end
  if seen ~= '' and id ~= seen and reset == 0 then
    reset = now
    redis.call('SET', key, id .. '|' .. string.format('%d', reset))
  end
  return id, reset
end
";

/// KEYS: lease, fence, epoch. ARGV: holder, token (without its epoch), ttl ms,
/// the lowest fence the grant may carry, the epoch the caller saw last, a
/// fresh epoch id, the settling time in ms. Returns `{1, epoch, fence}` when
/// granted (the token is `<epoch>.<token>`), `{0, epoch, 0}` when held,
/// `{-1, epoch, 0}` while the store settles after losing its data. The lowest
/// fence is above the caller's floor (the last fence the stored rows saw) and
/// the caller's wall clock, so fences keep growing when Redis loses its data,
/// whatever the clocks of the workers say.
static ACQUIRE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(&format!(
        r"{EPOCH}{GRANT}
local epoch, settling = settle()
if settling then return {{-1, epoch, 0}} end
if redis.call('EXISTS', KEYS[1]) == 1 then return {{0, epoch, 0}} end
return grant(epoch)"
    ))
});

/// What [`ACQUIRE`] and [`TAKE_OVER`] share (same KEYS and ARGV): the
/// store's epoch and whether it is still settling after a loss of data, and
/// the grant (the next fence, at least the lowest asked, and the lease's
/// value).
const GRANT: &str = r"
local function settle()
  local now = now_ms()
  local epoch, reset = epoch_of(KEYS[3], ARGV[5], ARGV[6], now)
  return epoch, now - reset < tonumber(ARGV[7])
end
local function grant(epoch)
  local fence = redis.call('INCR', KEYS[2])
  if fence < tonumber(ARGV[4]) then
    fence = tonumber(ARGV[4])
    redis.call('SET', KEYS[2], ARGV[4])
  end
  local value = ARGV[1] .. '|' .. epoch .. '.' .. ARGV[2] .. '|' .. string.format('%d', fence)
  redis.call('SET', KEYS[1], value, 'PX', ARGV[3])
  return {1, epoch, fence}
end
";

/// [`ACQUIRE`] from a holder that is gone. KEYS: lease, fence, epoch, the
/// member key of the holder taken from. ARGV: as [`ACQUIRE`], then that
/// holder, then the most its membership may have left in ms (-2: none, its
/// member key is gone). Granted when nobody holds the lease, or that holder
/// does (its value is `<holder>|<token>|<fence>`, the token and fence
/// without `|`) and its member key's time to live (`PTTL`, -2 once gone) is
/// at most that; `{0, epoch, 0}` otherwise.
static TAKE_OVER: LazyLock<Script> = LazyLock::new(|| {
    Script::new(&format!(
        r"{EPOCH}{GRANT}
local epoch, settling = settle()
if settling then return {{-1, epoch, 0}} end
local held = redis.call('GET', KEYS[1])
if held then
  local prefix = ARGV[8] .. '|'
  if string.sub(held, 1, #prefix) ~= prefix then return {{0, epoch, 0}} end
  local _, bars = string.gsub(string.sub(held, #prefix + 1), '|', '')
  if bars ~= 1 then return {{0, epoch, 0}} end
  if redis.call('PTTL', KEYS[4]) > tonumber(ARGV[9]) then return {{0, epoch, 0}} end
end
return grant(epoch)"
    ))
});

/// KEYS: lease, fence, epoch. ARGV: value, ttl ms, the epoch of the lease's
/// grant, the epoch the caller saw last, a fresh epoch id, the lease's fence.
/// Returns `{1, ''}` when the lease was ours, `{2, epoch}` when the store had
/// lost it with its data since the grant and it is ours again (its fence
/// kept), `{0, ...}` when it expired or another holder has it.
static RENEW: LazyLock<Script> = LazyLock::new(|| {
    Script::new(&format!(
        r"{EPOCH}
local held = redis.call('GET', KEYS[1])
if held == ARGV[1] then return {{redis.call('PEXPIRE', KEYS[1], ARGV[2]), ''}} end
if held or ARGV[3] == '' then return {{0, ''}} end
local epoch = epoch_of(KEYS[3], ARGV[4], ARGV[5], now_ms())
if epoch == ARGV[3] then return {{0, epoch}} end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
local fence = tonumber(redis.call('GET', KEYS[2]) or '0')
if fence < tonumber(ARGV[6]) then redis.call('SET', KEYS[2], ARGV[6]) end
return {{2, epoch}}"
    ))
});

/// KEYS: lease. ARGV: value. Returns 1 when the lease was ours.
static RELEASE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0",
    )
});

/// Leases in Redis under `{prefix}:`; clones share one multiplexed connection
/// and what they know of the store's epoch.
#[derive(Clone)]
pub struct RedisLeases {
    connection: ConnectionManager,
    prefix: String,
    /// The store's epoch this handle saw last (empty before the first).
    seen: Arc<Mutex<String>>,
    /// When this handle last found the store had lost its data.
    reset_seen: Arc<Mutex<Option<std::time::Instant>>>,
}

impl RedisLeases {
    /// Connects to Redis at `url`; fails when it is unreachable.
    pub async fn connect(url: &str, prefix: &str) -> Result<RedisLeases, LeaseError> {
        let client = redis::Client::open(url).map_err(store_error)?;
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(TIMEOUT))
            .set_response_timeout(Some(TIMEOUT))
            .set_number_of_retries(2)
            .set_max_delay(Duration::from_secs(1));
        let connection = ConnectionManager::new_with_config(client, config)
            .await
            .map_err(store_error)?;
        let leases = RedisLeases {
            connection,
            prefix: prefix.to_owned(),
            seen: Arc::default(),
            reset_seen: Arc::default(),
        };
        let epoch: Option<String> = leases
            .connection
            .clone()
            .get(leases.epoch_key())
            .await
            .map_err(store_error)?;
        leases.learn_epoch(epoch.as_deref());
        Ok(leases)
    }

    fn epoch_key(&self) -> String {
        format!("{}:epoch", self.prefix)
    }

    fn seen(&self) -> String {
        self.seen
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Learns the store's epoch (`{prefix}:epoch`'s value) while this handle
    /// knows none: a handle that knew it tells a store that lost its data
    /// from a fresh one even before its first claim (a worker that owned
    /// nothing yet is held back like the rest). Never replaces a known one:
    /// a new epoch is noticed by the scripts, which mark the reset; another
    /// epoch, or none, is noted as a loss of data seen now.
    fn learn_epoch(&self, value: Option<&str>) {
        let id = value.and_then(|v| v.split_once('|')).map(|(id, _)| id);
        let mut seen = self.seen.lock().unwrap_or_else(PoisonError::into_inner);
        match id {
            Some(id) if seen.is_empty() => id.clone_into(&mut seen),
            _ if !seen.is_empty() && id != Some(seen.as_str()) => self.note_reset(),
            _ => {}
        }
    }

    fn note_reset(&self) {
        *self
            .reset_seen
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(std::time::Instant::now());
    }

    /// Records the store's epoch as seen now; says so when it changed.
    fn saw(&self, epoch: &str) {
        let mut seen = self.seen.lock().unwrap_or_else(PoisonError::into_inner);
        if *seen != epoch {
            if !seen.is_empty() {
                self.note_reset();
                tracing::warn!(
                    prefix = %self.prefix,
                    "the lease store lost its data: owners take their leases back, claims wait a lease time"
                );
            }
            epoch.clone_into(&mut seen);
        }
    }

    fn lease_key(&self, key: &str) -> String {
        format!("{}:{key}", self.prefix)
    }

    fn member_key(&self, member: &str) -> String {
        format!("{}:member:{member}", self.prefix)
    }

    fn api_pod_key(&self, pod: &str) -> String {
        format!("{}:api-pod:{pod}", self.prefix)
    }

    /// The live keys under `key_prefix` with their values and times to live,
    /// names without the prefix, sorted.
    async fn present(&self, key_prefix: &str) -> Result<Vec<Member>, LeaseError> {
        let pattern = format!("{}*", glob_escape(key_prefix));
        let mut connection = self.connection.clone();
        let mut keys: Vec<String> = connection
            .scan_options(ScanOptions::default().with_pattern(pattern).with_count(500))
            .await
            .map_err(store_error)?
            .try_collect()
            .await
            .map_err(store_error)?;
        // SCAN may return a key twice.
        keys.sort();
        keys.dedup();
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        let mut pipe = redis::pipe();
        for key in &keys {
            pipe.get(key).pttl(key);
        }
        let answers: Vec<(Option<u64>, i64)> = pipe
            .query_async(&mut connection)
            .await
            .map_err(store_error)?;
        // A key that expired between SCAN and GET is gone.
        Ok(keys
            .iter()
            .zip(answers)
            .filter_map(|(key, (value, left))| {
                Some(Member {
                    name: key.strip_prefix(key_prefix)?.to_owned(),
                    load: value?,
                    left: Duration::from_millis(u64::try_from(left).ok()?),
                })
            })
            .collect())
    }

    /// Runs [`ACQUIRE`], or [`TAKE_OVER`] from `from`.
    async fn grant(
        &self,
        script: &Script,
        key: &str,
        holder: &str,
        from: Option<(&str, Gone)>,
        ttl: Duration,
        floor: u64,
    ) -> Result<Option<Lease>, LeaseError> {
        let token = format!("{:032x}", rand::random::<u128>());
        let lease_key = self.lease_key(key);
        let lowest = wall_clock_micros().max(floor.saturating_add(1));
        let mut invocation = script.key(&lease_key);
        invocation
            .key(format!("{lease_key}:fence"))
            .key(self.epoch_key())
            .arg(holder)
            .arg(&token)
            .arg(millis(ttl))
            .arg(lowest)
            .arg(self.seen())
            .arg(fresh_id())
            // The settling time after a loss of data is one lease time: owners
            // renew well within it, so a live one has its lease back by then.
            .arg(millis(ttl));
        if let Some((from, gone)) = from {
            let left_at_most = match gone {
                Gone::Lapsed => -2,
                Gone::Silent { left_at_most } => {
                    i64::try_from(left_at_most.as_millis()).unwrap_or(i64::MAX)
                }
            };
            invocation
                .key(self.member_key(from))
                .arg(from)
                .arg(left_at_most);
        }
        let (status, epoch, fence): (i64, String, u64) = self.run(&invocation).await?;
        self.saw(&epoch);
        Ok((status == 1).then(|| Lease {
            key: key.to_owned(),
            holder: holder.to_owned(),
            token: format!("{epoch}.{token}"),
            fence,
        }))
    }

    /// Runs a script, loading it into Redis first when needed.
    async fn run<T: redis::FromRedisValue>(
        &self,
        invocation: &redis::ScriptInvocation<'_>,
    ) -> Result<T, LeaseError> {
        invocation
            .invoke_async(&mut self.connection.clone())
            .await
            .map_err(store_error)
    }
}

fn store_error(error: redis::RedisError) -> LeaseError {
    LeaseError(error.to_string())
}

/// Redis wants at least one millisecond.
fn millis(ttl: Duration) -> u64 {
    u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX).max(1)
}

fn value(lease: &Lease) -> String {
    format!("{}|{}|{}", lease.holder, lease.token, lease.fence)
}

/// The store's epoch a lease was granted in (the part of its token before
/// the first `.`; empty for a token without one).
fn epoch_of(lease: &Lease) -> &str {
    lease.token.split_once('.').map_or("", |(epoch, _)| epoch)
}

fn fresh_id() -> String {
    format!("{:016x}", rand::random::<u64>())
}

/// The holder part of a lease value; a holder may itself contain `|`.
fn holder(value: &str) -> Option<&str> {
    value.rsplitn(3, '|').nth(2)
}

/// Escapes the glob characters of a `SCAN MATCH` pattern.
fn glob_escape(text: &str) -> String {
    text.chars()
        .flat_map(|c| match c {
            '*' | '?' | '[' | ']' | '\\' => vec!['\\', c],
            _ => vec![c],
        })
        .collect()
}

#[async_trait]
impl Leases for RedisLeases {
    async fn acquire(
        &self,
        key: &str,
        holder: &str,
        ttl: Duration,
        floor: u64,
    ) -> Result<Option<Lease>, LeaseError> {
        self.grant(&ACQUIRE, key, holder, None, ttl, floor).await
    }

    async fn take_over(
        &self,
        key: &str,
        holder: &str,
        from: (&str, Gone),
        ttl: Duration,
        floor: u64,
    ) -> Result<Option<Lease>, LeaseError> {
        self.grant(&TAKE_OVER, key, holder, Some(from), ttl, floor)
            .await
    }

    async fn renew(&self, lease: &Lease, ttl: Duration) -> Result<bool, LeaseError> {
        let key = self.lease_key(&lease.key);
        let (status, epoch): (i64, String) = self
            .run(
                RENEW
                    .key(&key)
                    .key(format!("{key}:fence"))
                    .key(self.epoch_key())
                    .arg(value(lease))
                    .arg(millis(ttl))
                    .arg(epoch_of(lease))
                    .arg(self.seen())
                    .arg(fresh_id())
                    .arg(lease.fence),
            )
            .await?;
        if !epoch.is_empty() {
            self.saw(&epoch);
        }
        if status == 2 {
            tracing::warn!(key = %lease.key, fence = lease.fence,
                "the lease store had lost this lease with its data: taken back");
        }
        Ok(status > 0)
    }

    async fn release(&self, lease: &Lease) -> Result<bool, LeaseError> {
        self.run(RELEASE.key(self.lease_key(&lease.key)).arg(value(lease)))
            .await
    }

    async fn holders(&self, keys: &[String]) -> Result<Vec<Option<String>>, LeaseError> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        // The epoch rides along: a sweeping worker knows it before it claims.
        let mut keys: Vec<String> = keys.iter().map(|key| self.lease_key(key)).collect();
        keys.push(self.epoch_key());
        let mut values: Vec<Option<String>> = self
            .connection
            .clone()
            .mget(keys)
            .await
            .map_err(store_error)?;
        self.learn_epoch(values.pop().flatten().as_deref());
        Ok(values
            .iter()
            .map(|v| v.as_deref().and_then(holder).map(str::to_owned))
            .collect())
    }

    async fn announce(&self, member: &str, load: u64, ttl: Duration) -> Result<(), LeaseError> {
        let key = self.member_key(member);
        self.connection
            .clone()
            .pset_ex(key, load, millis(ttl))
            .await
            .map_err(store_error)
    }

    async fn withdraw(&self, member: &str) -> Result<(), LeaseError> {
        self.connection
            .clone()
            .del(self.member_key(member))
            .await
            .map_err(store_error)
    }

    async fn members(&self) -> Result<Vec<Member>, LeaseError> {
        self.present(&self.member_key("")).await
    }

    async fn announce_api_pod(&self, pod: &str, ttl: Duration) -> Result<(), LeaseError> {
        let key = self.api_pod_key(pod);
        self.connection
            .clone()
            .pset_ex(key, 1, millis(ttl))
            .await
            .map_err(store_error)
    }

    async fn api_pods(&self) -> Result<Vec<String>, LeaseError> {
        let pods = self.present(&self.api_pod_key("")).await?;
        Ok(pods.into_iter().map(|pod| pod.name).collect())
    }

    async fn healthy(&self) -> bool {
        let mut connection = self.connection.clone();
        let ping = connection.ping::<String>();
        matches!(tokio::time::timeout(HEALTH_TIMEOUT, ping).await, Ok(Ok(_)))
    }

    fn kind(&self) -> &'static str {
        "redis"
    }

    fn reset_seen(&self) -> Option<std::time::Instant> {
        *self
            .reset_seen
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

fn wall_clock_micros() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_micros()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}
