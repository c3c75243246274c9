/* Parley console: the browser front end of the operator console, served by the
   gateway at /console/. One classic script, no dependencies. Hash routes:
   #/sessions, #/session/<id>, #/cluster. The bearer token lives only in
   sessionStorage. Every value from the network or the user reaches the DOM as
   text (textContent / text nodes), never as HTML. */
(function () {
  'use strict';

  /* ---------- DOM helpers ---------- */

  var SVG_NS = 'http://www.w3.org/2000/svg';
  var DASH = '—';

  function $(id) { return document.getElementById(id); }

  // Sets attributes with setAttribute; refuses event-handler attributes and
  // javascript: links. null/undefined/false skip the attribute, true sets it empty.
  function setAttrs(el, attrs) {
    if (!attrs) return;
    Object.keys(attrs).forEach(function (k) {
      var v = attrs[k];
      if (/^on/i.test(k) || v === null || v === undefined || v === false) return;
      if ((k === 'href' || k === 'src') && /^\s*javascript:/i.test(String(v))) return;
      el.setAttribute(k, v === true ? '' : String(v));
    });
  }

  // Appends children; strings and numbers become text nodes.
  function appendAll(el, children) {
    children.forEach(function (c) {
      if (c === null || c === undefined || c === false) return;
      if (Array.isArray(c)) appendAll(el, c);
      else if (c instanceof Node) el.appendChild(c);
      else el.appendChild(document.createTextNode(String(c)));
    });
  }

  function h(tag, attrs) {
    var el = document.createElement(tag);
    setAttrs(el, attrs);
    appendAll(el, Array.prototype.slice.call(arguments, 2));
    return el;
  }

  function svg(tag, attrs) {
    var el = document.createElementNS(SVG_NS, tag);
    setAttrs(el, attrs);
    appendAll(el, Array.prototype.slice.call(arguments, 2));
    return el;
  }

  function setText(el, text) {
    text = String(text);
    if (el && el.textContent !== text) el.textContent = text;
  }

  // A message paragraph: text (or hidden when empty) and a kind for colour.
  function setMsg(el, text, kind) {
    if (!el) return;
    text = text ? String(text) : '';
    setText(el, text);
    el.hidden = !text;
    if (kind) el.setAttribute('data-kind', kind);
  }

  // Re-renders an element only when its data changed, so polling keeps focus,
  // checkbox state and scroll positions.
  var renderedSig = new WeakMap();
  function renderIfChanged(el, data, render) {
    var sig = JSON.stringify(data === undefined ? null : data);
    if (renderedSig.get(el) === sig) return;
    renderedSig.set(el, sig);
    render();
  }
  function clearRendered(el) {
    renderedSig.delete(el);
    el.replaceChildren();
  }

  function emptyRow(cols, text) {
    return h('tr', { class: 'empty' }, h('td', { colspan: cols }, text));
  }

  /* ---------- formatting ---------- */

  function num(v, fallback) {
    return typeof v === 'number' && isFinite(v) ? v : fallback;
  }

  function orDash(v) {
    return v === null || v === undefined || v === '' ? DASH : String(v);
  }

  function fmtNum(v) {
    if (typeof v !== 'number' || !isFinite(v)) return DASH;
    return Number.isInteger(v) ? String(v) : v.toFixed(2);
  }

  function yesNo(v) {
    if (v === true) return 'yes';
    if (v === false) return 'no';
    return DASH;
  }

  // RFC 3339 strings, or numbers of seconds (milliseconds when very large).
  function toDate(v) {
    if (typeof v === 'string' && /^\d+$/.test(v)) v = Number(v);
    if (typeof v === 'number') return new Date(v > 1e12 ? v : v * 1000);
    return new Date(v);
  }

  function fmtTime(v) {
    if (v === null || v === undefined || v === '') return DASH;
    var d = toDate(v);
    return isNaN(d.getTime()) ? String(v) : d.toLocaleString();
  }

  function timeEl(v) {
    var d = v === null || v === undefined || v === '' ? null : toDate(v);
    var iso = d && !isNaN(d.getTime()) ? d.toISOString() : null;
    return h('time', { datetime: iso, title: iso }, fmtTime(v));
  }

  function statusBadge(status, id) {
    var s = status ? String(status) : 'unknown';
    return h('span', { class: 'status', 'data-status': s, id: id || null }, s);
  }

  function webhookSummary(w) {
    w = w || {};
    var state = w.state ? String(w.state) : 'none';
    var pending = num(w.pending, 0);
    var dead = num(w.deadLetters, 0);
    return h('span', { class: 'hook' },
      h('span', { class: 'hook-state', 'data-state': state }, state),
      pending > 0 ? h('span', { class: 'hook-count' }, pending + ' pending') : null,
      dead > 0 ? h('span', { class: 'hook-count bad' }, dead + ' dead') : null);
  }

  function sessionHref(id) {
    return '#/session/' + encodeURIComponent(id);
  }

  /* ---------- storage, activity and idle sign-out ---------- */

  var K_TOKEN = 'parley.console.token';
  var K_CLIENT = 'parley.console.clientId';
  var K_ACTIVE = 'parley.console.lastActivity';
  var IDLE_MS = 30 * 60 * 1000;
  var IDLE_MSG = 'Signed out after 30 minutes without activity';
  var REFUSED_MSG = 'The token was refused';
  var CLIENT_RE = /^[A-Za-z0-9]{1,64}$/;

  function ssGet(k) {
    try { return window.sessionStorage.getItem(k); } catch (e) { return null; }
  }
  function ssSet(k, v) {
    try { window.sessionStorage.setItem(k, v); return true; } catch (e) { return false; }
  }
  function ssClear() {
    try { window.sessionStorage.clear(); } catch (e) { /* nothing stored */ }
  }

  function auth() {
    var token = ssGet(K_TOKEN);
    return token ? { token: token, clientId: ssGet(K_CLIENT) || '' } : null;
  }

  var lastTouch = 0;
  function touch(force) {
    var now = Date.now();
    if (!force && (now - lastTouch < 1000 || !auth())) return;
    lastTouch = now;
    ssSet(K_ACTIVE, String(now));
  }

  function idleExpired() {
    var t = Number(ssGet(K_ACTIVE));
    return !t || Date.now() - t > IDLE_MS;
  }

  // Signs out when the idle limit passed; true when it did.
  function checkIdle() {
    if (auth() && idleExpired()) {
      signOut(IDLE_MSG);
      return true;
    }
    return false;
  }

  /* ---------- API ---------- */

  function ApiError(message, status, silent) {
    this.message = message;
    this.status = status || 0;
    this.silent = !!silent;
  }

  function qs(path, params) {
    var u = new URLSearchParams();
    Object.keys(params || {}).forEach(function (k) {
      var v = params[k];
      if (v !== undefined && v !== null && v !== '') u.set(k, String(v));
    });
    var s = u.toString();
    return s ? path + '?' + s : path;
  }

  function apiUrl(path) {
    return new URL('../' + path.replace(/^\/+/, ''), location.href);
  }

  // Calls the gateway. opts: body (JSON), token (sign-in check: no stored
  // token, no sign-out on 401), signal (defaults to the current page's).
  // Resolves with the JSON answer; rejects with ApiError (silent when the call
  // was cancelled or the user got signed out).
  async function api(method, path, opts) {
    opts = opts || {};
    var checking = !!opts.token;
    var a = auth();
    var token = checking ? opts.token : a && a.token;
    if (!token) throw new ApiError('Not signed in', 0, true);
    if (!checking && checkIdle()) throw new ApiError('Signed out', 0, true);

    var init = {
      method: method,
      headers: { Authorization: 'Bearer ' + token, Accept: 'application/json' },
      cache: 'no-store',
      credentials: 'same-origin'
    };
    var signal = opts.signal === undefined ? page.ctrl.signal : opts.signal;
    if (signal) init.signal = signal;
    if (opts.body !== undefined) {
      init.headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(opts.body);
    }

    var res, text;
    try {
      res = await fetch(apiUrl(path), init);
      text = await res.text();
    } catch (e) {
      if (e && e.name === 'AbortError') throw new ApiError('Cancelled', 0, true);
      throw new ApiError('Cannot reach the gateway (network error).', 0);
    }
    var data = null;
    try { data = text ? JSON.parse(text) : null; } catch (e) { data = null; }

    if (res.status === 401 && !checking) {
      signOut(REFUSED_MSG);
      throw new ApiError(REFUSED_MSG, 401, true);
    }
    if (!res.ok) {
      var msg = data && typeof data.error === 'string' && data.error
        ? data.error : 'HTTP ' + res.status + (res.statusText ? ' ' + res.statusText : '');
      throw new ApiError(msg, res.status);
    }
    if (!data || typeof data !== 'object') {
      throw new ApiError('Unexpected answer from the gateway (not JSON).', res.status);
    }
    return data;
  }

  function errText(e) {
    if (e instanceof ApiError) return e.message;
    return 'Unexpected error: ' + (e && e.message ? e.message : String(e));
  }

  /* ---------- page lifecycle: timers and requests die with the page ---------- */

  var page = { name: '', gen: 0, timers: new Set(), ctrl: new AbortController() };

  function leavePage() {
    page.gen++;
    page.timers.forEach(function (t) { clearTimeout(t); });
    page.timers.clear();
    page.ctrl.abort();
    page.ctrl = new AbortController();
    page.name = '';
  }

  // A function telling whether the page that called it is still shown.
  function guard() {
    var g = page.gen;
    return function () { return g === page.gen; };
  }

  function later(fn, ms) {
    var alive = guard();
    var id = setTimeout(function () {
      page.timers.delete(id);
      if (alive()) run(fn);
    }, ms);
    page.timers.add(id);
    return id;
  }

  function cancel(id) {
    clearTimeout(id);
    page.timers.delete(id);
  }

  // Runs fn now and then every ms after it finished, while the page lives.
  // Skips the work (not the schedule) while the tab is hidden.
  function every(ms, fn) {
    var alive = guard();
    async function tick() {
      if (!alive()) return;
      if (!document.hidden) await run(fn);
      if (alive()) later(tick, ms);
    }
    tick();
  }

  // Runs an action; an unexpected exception is shown, never left uncaught.
  function run(fn) {
    return Promise.resolve().then(fn).catch(function (e) {
      if (e && e.silent) return;
      showFlash(errText(e), 'error');
    });
  }

  async function withBusy(btn, fn) {
    btn.disabled = true;
    btn.setAttribute('aria-busy', 'true');
    try { return await fn(); } finally {
      btn.disabled = false;
      btn.removeAttribute('aria-busy');
    }
  }

  function onSubmit(form, fn) {
    form.addEventListener('submit', function (ev) {
      ev.preventDefault();
      run(fn);
    });
  }

  function onClick(el, fn) {
    el.addEventListener('click', function (ev) {
      ev.preventDefault();
      run(fn);
    });
  }

  /* ---------- flash message (survives one navigation) ---------- */

  var flashKeep = false;
  function showFlash(text, kind, keepForNextRoute) {
    setMsg($('flash'), text, kind || 'info');
    flashKeep = !!keepForNextRoute;
  }

  /* ---------- router ---------- */

  var PAGES = ['sessions', 'session', 'cluster'];

  function parseHash() {
    var parts = location.hash.replace(/^#\/?/, '').split('/').filter(Boolean);
    if (parts.length === 1 && (parts[0] === 'sessions' || parts[0] === 'cluster')) {
      return { name: parts[0] };
    }
    if (parts[0] === 'session' && parts.length === 2) {
      var id = null;
      try { id = decodeURIComponent(parts[1]); } catch (e) { id = null; }
      return { name: 'session', id: id };
    }
    return { name: '' };
  }

  function route(byNavigation) {
    var a = auth();
    if (!a) { leavePage(); showSignin(); return; }
    if (checkIdle()) return;
    var r = parseHash();
    if (a.clientId && !(r.name === 'session' && r.id === a.clientId)) {
      location.replace(sessionHref(a.clientId));
      return;
    }
    if (!r.name) { location.replace('#/sessions'); return; }

    leavePage();
    closeDialog();
    if (flashKeep) flashKeep = false; else setMsg($('flash'), '');
    showApp(a);
    page.name = r.name;
    PAGES.forEach(function (p) { $('page-' + p).hidden = p !== r.name; });
    setNav(r.name);
    if (r.name === 'sessions') enterSessions();
    else if (r.name === 'cluster') enterCluster();
    else enterSession(r.id);
    if (byNavigation) focusHeading(r.name);
  }

  function setNav(name) {
    [['nav-sessions', 'sessions'], ['nav-cluster', 'cluster']].forEach(function (n) {
      if (n[1] === name) $(n[0]).setAttribute('aria-current', 'page');
      else $(n[0]).removeAttribute('aria-current');
    });
  }

  function focusHeading(name) {
    var id = { sessions: 'sessions-heading', session: 'session-title', cluster: 'cluster-heading' }[name];
    var el = id && $(id);
    if (el) el.focus({ preventScroll: true });
  }

  /* ---------- sign-in / sign-out ---------- */

  function showSignin(note) {
    $('app').hidden = true;
    $('signin').hidden = false;
    document.title = 'Sign in · Parley console';
    if (note !== undefined) setMsg($('signin-note'), note, 'info');
    $('signin-token').value = '';
    $('signin-token').focus();
  }

  function showApp(a) {
    $('signin').hidden = true;
    $('app').hidden = false;
    var sessionMode = !!a.clientId;
    $('nav-sessions').hidden = sessionMode;
    $('nav-cluster').hidden = sessionMode;
    $('session-back').hidden = sessionMode;
    $('brand').setAttribute('href', sessionMode ? sessionHref(a.clientId) : '#/sessions');
    setText($('whoami'), sessionMode ? 'Session secret · ' + a.clientId : 'Account token');
  }

  function signOut(note) {
    leavePage();
    closeDialog();
    ssClear();
    resetAllData();
    showSignin(note || '');
  }

  // Forgets everything shown, so the next person signing in sees nothing stale.
  function resetAllData() {
    document.querySelectorAll('#app tbody, #session-health, #cluster-deps, #cluster-apis, #cluster-totals, #cluster-charts')
      .forEach(clearRendered);
    document.querySelectorAll('#app form').forEach(function (f) { f.reset(); });
    document.querySelectorAll('#app .msg').forEach(function (el) { setMsg(el, ''); });
    $('sessions-search').value = '';
    $('new-session-form').hidden = true;
    $('new-session').setAttribute('aria-expanded', 'false');
    setText($('sessions-count'), '');
    setText($('cluster-meta'), '');
    sessionsState.q = '';
    sessionsState.page = 1;
    samples.length = 0;
    sess = null;
  }

  function toggleSigninClient() {
    var on = $('signin-as-session').checked;
    $('signin-client-field').hidden = !on;
    if (on) $('signin-client').focus();
  }

  // Resolves with the session's exact clientId when the secret can see it.
  async function checkSessionSecret(token, clientId) {
    var data = await api('GET', qs('sessions', { clientId: clientId }), { token: token, signal: null });
    var list = Array.isArray(data.sessions) ? data.sessions : [];
    if (list.some(function (s) { return s && s.clientId === clientId; })) return clientId;
    throw new ApiError('This secret does not open session ' + clientId + '.', 403);
  }

  async function submitSignin() {
    var err = $('signin-error');
    var token = $('signin-token').value.trim();
    var asSession = $('signin-as-session').checked;
    var clientId = $('signin-client').value.trim();
    setMsg(err, '');
    if (!token) { setMsg(err, 'Enter a token.', 'error'); return; }
    if (asSession && !CLIENT_RE.test(clientId)) {
      setMsg(err, 'Enter the session id: 1 to 64 letters and digits.', 'error');
      return;
    }
    ssClear();
    await withBusy($('signin-submit'), async function () {
      try {
        var id = '';
        if (asSession) id = await checkSessionSecret(token, clientId);
        else await api('GET', 'cluster', { token: token, signal: null });
        if (!ssSet(K_TOKEN, token) || (id && !ssSet(K_CLIENT, id))) {
          ssClear();
          setMsg(err, 'This browser does not allow session storage, so the console cannot keep the token.', 'error');
          return;
        }
        touch(true);
        $('signin-form').reset();
        $('signin-client-field').hidden = true;
        setMsg($('signin-note'), '');
        route(false);
      } catch (e) {
        ssClear();
        setMsg(err, signinError(e, asSession), 'error');
      }
    });
  }

  function signinError(e, asSession) {
    if (e instanceof ApiError && (e.status === 401 || (e.status === 403 && !asSession))) {
      return asSession ? REFUSED_MSG + '.'
        : REFUSED_MSG + '. A session\'s secret works only with “Sign in with a session\'s secret”.';
    }
    return errText(e);
  }

  /* ---------- #/sessions ---------- */

  var sessionsState = { q: '', page: 1, limit: 50, req: 0, debounce: 0 };

  function enterSessions() {
    document.title = 'Sessions · Parley console';
    every(5000, loadSessions);
  }

  async function loadSessions() {
    var st = sessionsState;
    var my = ++st.req;
    var alive = guard();
    var err = $('sessions-error');
    try {
      var data = await api('GET', qs('sessions', { q: st.q, page: st.page, limit: st.limit }));
      if (!alive() || my !== st.req) return;
      var list = Array.isArray(data.sessions) ? data.sessions : [];
      var total = num(data.pagination && data.pagination.total, list.length);
      var lastPage = Math.max(1, Math.ceil(total / st.limit));
      if (st.page > lastPage) { st.page = lastPage; return loadSessions(); }
      setMsg(err, '');
      renderSessionRows(list, st.q);
      renderPager(total, list.length);
    } catch (e) {
      if (e.silent || !alive() || my !== st.req) return;
      setMsg(err, errText(e), 'error');
    }
  }

  function renderSessionRows(list, q) {
    var tbody = $('sessions-table').tBodies[0];
    renderIfChanged(tbody, { list: list, q: q }, function () {
      if (!list.length) {
        tbody.replaceChildren(emptyRow(7, q ? 'No sessions match “' + q + '”.' : 'No sessions yet.'));
        return;
      }
      tbody.replaceChildren.apply(tbody, list.map(sessionRow));
    });
  }

  function sessionRow(s) {
    s = s || {};
    var id = String(s.clientId || '');
    return h('tr', { 'data-client-id': id },
      h('td', { class: 'id' }, h('a', { href: sessionHref(id), title: s.jid || null }, id)),
      h('td', {}, statusBadge(s.status)),
      h('td', {}, orDash(s.podName)),
      h('td', {}, timeEl(s.connectedAt)),
      h('td', { class: 'num' }, fmtNum(s.reconnects)),
      h('td', { class: 'wrap' }, orDash(s.lastDisconnect)),
      h('td', {}, webhookSummary(s.webhook)));
  }

  function renderPager(total, shown) {
    var st = sessionsState;
    var from = (st.page - 1) * st.limit;
    setText($('sessions-count'), total > 0 ? (from + 1) + '–' + (from + shown) + ' of ' + total : '0 of 0');
    $('sessions-prev').disabled = st.page <= 1;
    $('sessions-next').disabled = st.page * st.limit >= total;
  }

  function onSearchInput() {
    var st = sessionsState;
    cancel(st.debounce);
    st.debounce = later(function () {
      st.q = $('sessions-search').value.trim();
      st.page = 1;
      return loadSessions();
    }, 250);
  }

  function turnPage(delta) {
    var st = sessionsState;
    st.page = Math.max(1, st.page + delta);
    return loadSessions();
  }

  function toggleNewSession(open) {
    var form = $('new-session-form');
    form.hidden = !open;
    $('new-session').setAttribute('aria-expanded', open ? 'true' : 'false');
    setMsg($('new-error'), '');
    if (open) $('new-client-id').focus();
    else form.reset();
  }

  async function submitNewSession() {
    var err = $('new-error');
    var id = $('new-client-id').value.trim();
    setMsg(err, '');
    if (!CLIENT_RE.test(id)) {
      setMsg(err, 'The session id must be 1 to 64 letters and digits (no symbols).', 'error');
      return;
    }
    var body = {};
    [['webhookUrl', 'new-webhook-url'], ['webhookToken', 'new-webhook-token'], ['pollLookupUrl', 'new-poll-lookup-url']]
      .forEach(function (f) {
        var v = $(f[1]).value.trim();
        if (v) body[f[0]] = v;
      });
    await withBusy($('new-submit'), async function () {
      try {
        var r = await api('POST', qs('start', { clientId: id }), { body: body });
        toggleNewSession(false);
        location.hash = sessionHref(typeof r.clientId === 'string' && r.clientId ? r.clientId : id);
      } catch (e) {
        if (!e.silent) setMsg(err, errText(e), 'error');
      }
    });
  }

  /* ---------- #/session/<id> ---------- */

  var sess = null; // state of the session page being shown

  function enterSession(id) {
    sess = { id: id, row: null, status: '', webhookDirty: false, prefilled: false, selected: new Set(), deadTotal: 0 };
    resetSessionPage(id);
    if (typeof id !== 'string' || !CLIENT_RE.test(id)) {
      setMsg($('session-error'), 'This is not a valid session id (letters and digits only).', 'error');
      $('pairing').hidden = true;
      return;
    }
    every(3000, refreshSession);
    every(2000, refreshQr);
  }

  function resetSessionPage(id) {
    document.title = (id || 'Session') + ' · Parley console';
    setText($('session-title'), id || '');
    setSessionStatus('');
    ['session-health', 'history-table', 'events-table', 'dead-table', 'rooms-table'].forEach(function (tid) {
      var el = $(tid);
      clearRendered(el.tBodies ? el.tBodies[0] : el);
    });
    ['session-error', 'history-error', 'events-error', 'dead-error', 'redeliver-result', 'send-result',
      'webhook-result', 'presence-result', 'calls-result', 'proxy-result', 'status-result', 'label-result', 'pair-error', 'qr-error', 'start-result', 'rooms-note'].forEach(function (mid) { setMsg($(mid), ''); });
    ['pair-phone-form', 'send-form', 'webhook-form', 'presence-form', 'calls-form', 'proxy-form', 'status-form', 'label-form'].forEach(function (fid) { $(fid).reset(); });
    clearRendered($('label-list'));
    $('status-delete').hidden = true;
    setText($('dead-count'), '');
    $('dead-select-all').checked = false;
    $('pair-code-box').hidden = true;
    setText($('pair-code'), '');
    $('rooms-wrap').hidden = true;
    $('pairing').hidden = true;
    $('connected-note').hidden = true;
    showQr('');
    updateDeadButtons();
  }

  function setSessionStatus(status) {
    var el = $('session-status');
    var s = status ? String(status) : '';
    setText(el, s || '…');
    el.setAttribute('data-status', s || 'unknown');
    if (sess) sess.status = s;
    updatePairing();
  }

  // The pairing panel shows while not connected; a note replaces it once connected.
  function updatePairing() {
    var s = sess ? sess.status : '';
    var connected = s === 'connected';
    $('pairing').hidden = connected || !s;
    $('connected-note').hidden = !connected;
    if (connected) {
      showQr('');
      $('pair-code-box').hidden = true;
    }
  }

  async function refreshSession() {
    var alive = guard();
    var id = sess.id;
    await Promise.all([
      loadRow(id, alive).then(function (row) { return loadEvents(id, row, alive); }),
      loadHistory(id, alive),
      loadDead(id, alive),
      loadRooms(id, alive),
      loadLabels(id, alive)
    ]);
  }

  // The session's row: /sessions?clientId= names exactly one session (and
  // names it for a session's secret, which may only act on its own session).
  async function findSession(id) {
    var data = await api('GET', qs('sessions', { clientId: id }));
    var list = Array.isArray(data.sessions) ? data.sessions : [];
    for (var i = 0; i < list.length; i++) if (list[i] && list[i].clientId === id) return list[i];
    return null;
  }

  async function loadRow(id, alive) {
    var err = $('session-error');
    try {
      var row = await findSession(id);
      if (!alive()) return null;
      if (!row) {
        setMsg(err, 'No session “' + id + '” is visible to this token. It may not exist or may have been deleted.', 'error');
        return null;
      }
      setMsg(err, '');
      sess.row = row;
      setSessionStatus(row.status);
      renderHealth(row);
      prefillWebhook(row);
      return row;
    } catch (e) {
      if (!e.silent && alive()) setMsg(err, errText(e), 'error');
      return null;
    }
  }

  function renderHealth(row) {
    var dl = $('session-health');
    renderIfChanged(dl, row, function () {
      var w = row.webhook || {};
      var items = [
        ['JID', orDash(row.jid)],
        ['Owner pod', orDash(row.podName)],
        ['Connected since', timeEl(row.connectedAt)],
        ['Reconnects', fmtNum(row.reconnects)],
        ['Last disconnect', orDash(row.lastDisconnect)],
        ['Logged in', yesNo(row.loggedIn)],
        ['Connected', yesNo(row.connected)],
        ['Webhook URL', w.url ? String(w.url) : 'none (delivery off)'],
        ['Webhook state', webhookSummary(w)],
        ['Poll lookup URL', orDash(w.pollLookupUrl)],
        ['Event types', typesText(w.types) || 'every type'],
        ['Workspace (orgId)', orDash(row.orgId)],
        ['Presence set', orDash(row.presence)],
        ['Calls', callsText(row.calls)],
        ['Network proxy', proxyText(row.proxy)],
        ['Created', timeEl(row.createdAt)],
        ['Last event seq', fmtNum(row.lastEventSeq)]
      ];
      dl.replaceChildren.apply(dl, items.map(function (kv) {
        return h('div', { class: 'kv-row' }, h('dt', {}, kv[0]), h('dd', {}, kv[1]));
      }));
    });
  }

  // A webhook's selected event types as the form writes them ('' for every type).
  function typesText(types) {
    return Array.isArray(types) ? types.map(String).join(', ') : '';
  }

  // Fills the webhook form from the row once, unless the user already typed.
  function prefillWebhook(row) {
    if (sess.prefilled || sess.webhookDirty) return;
    var w = row.webhook || {};
    $('webhook-url').value = w.url ? String(w.url) : '';
    $('poll-lookup-url').value = w.pollLookupUrl ? String(w.pollLookupUrl) : '';
    $('webhook-types').value = typesText(w.types);
    sess.prefilled = true;
  }

  async function loadHistory(id, alive) {
    var tbody = $('history-table').tBodies[0];
    try {
      var data = await api('GET', qs('session-history', { clientId: id }));
      if (!alive()) return;
      setMsg($('history-error'), '');
      var changes = Array.isArray(data.changes) ? data.changes : [];
      renderIfChanged(tbody, changes, function () {
        if (!changes.length) { tbody.replaceChildren(emptyRow(5, 'No state changes recorded.')); return; }
        tbody.replaceChildren.apply(tbody, changes.map(historyRow));
      });
    } catch (e) {
      if (!e.silent && alive()) setMsg($('history-error'), errText(e), 'error');
    }
  }

  function historyRow(c) {
    c = c || {};
    return h('tr', {},
      h('td', {}, timeEl(c.at)),
      h('td', {}, statusBadge(c.status)),
      h('td', {}, yesNo(c.connected)),
      h('td', { class: 'wrap' }, orDash(c.reason)),
      h('td', {}, orDash(c.podName)));
  }

  async function loadEvents(id, row, alive) {
    if (!row || !alive()) return;
    var tbody = $('events-table').tBodies[0];
    var last = num(row.lastEventSeq, 0);
    try {
      var items = [];
      if (last > 0) {
        var data = await api('GET', qs('events', { clientId: id, after: Math.max(0, last - 20), limit: 50 }));
        if (!alive()) return;
        items = (Array.isArray(data.events) ? data.events : []).slice(-20).reverse();
      }
      setMsg($('events-error'), '');
      renderIfChanged(tbody, items, function () {
        if (!items.length) { tbody.replaceChildren(emptyRow(8, 'No events yet.')); return; }
        tbody.replaceChildren.apply(tbody, items.map(function (it) {
          return h('tr', { 'data-seq': it && it.seq }, eventCells(it));
        }));
      });
    } catch (e) {
      if (!e.silent && alive()) setMsg($('events-error'), errText(e), 'error');
    }
  }

  // The shared cells of an event row (recent events and dead letters).
  function eventCells(item) {
    item = item || {};
    var ev = item.event && typeof item.event === 'object' ? item.event : {};
    var d = item.delivery && typeof item.delivery === 'object' ? item.delivery : {};
    var state = d.state ? String(d.state) : 'none';
    var body = typeof ev.body === 'string' ? ev.body : '';
    return [
      h('td', { class: 'num' }, orDash(item.seq)),
      h('td', {}, timeEl(eventTime(ev, d))),
      h('td', {}, orDash(ev.type)),
      h('td', { class: 'wrap' }, eventFrom(ev)),
      h('td', { class: 'text', title: body || null }, body),
      h('td', {}, h('span', { class: 'delivery', 'data-state': state }, state)),
      h('td', { class: 'num' }, fmtNum(d.attempts)),
      h('td', { class: 'num' }, d.lastStatus === null || d.lastStatus === undefined ? DASH : String(d.lastStatus))
    ];
  }

  function eventTime(ev, d) {
    var ts = ev.timestamp;
    if ((typeof ts === 'number' && isFinite(ts)) || (typeof ts === 'string' && ts)) return ts;
    return d.lastAttemptAt;
  }

  function eventFrom(ev) {
    var who = ev.from || ev.remoteName || ev.pushName || ev.remoteJid || '';
    return [
      who ? String(who) : (ev.fromMe ? '' : DASH),
      ev.fromMe === true ? h('span', { class: 'tag' }, 'fromMe') : null
    ];
  }

  async function loadDead(id, alive) {
    var tbody = $('dead-table').tBodies[0];
    try {
      var data = await api('GET', qs('events/dead-letters', { clientId: id, page: 1, limit: 100 }));
      if (!alive()) return;
      setMsg($('dead-error'), '');
      var items = Array.isArray(data.events) ? data.events : [];
      var total = num(data.pagination && data.pagination.total, items.length);
      sess.deadTotal = total;
      pruneSelection(items);
      setText($('dead-count'), total === 0 ? 'None'
        : (items.length < total ? 'Showing ' + items.length + ' of ' + total : total + ' in total'));
      renderIfChanged(tbody, items, function () {
        if (!items.length) { tbody.replaceChildren(emptyRow(9, 'No dead letters.')); return; }
        tbody.replaceChildren.apply(tbody, items.map(deadRow));
      });
      updateDeadButtons();
    } catch (e) {
      if (!e.silent && alive()) setMsg($('dead-error'), errText(e), 'error');
    }
  }

  function deadRow(item) {
    item = item || {};
    var key = item.eventId === undefined || item.eventId === null ? '' : String(item.eventId);
    return h('tr', { 'data-seq': item.seq, 'data-event-id': key },
      h('td', { class: 'pick' }, h('input', {
        type: 'checkbox',
        'data-event-id': key,
        'aria-label': 'Select event ' + orDash(item.seq),
        checked: key !== '' && sess.selected.has(key),
        disabled: key === ''
      })),
      eventCells(item));
  }

  // Selection keys are eventIds as strings; the original values are kept for the API.
  function pruneSelection(items) {
    var present = new Map();
    items.forEach(function (it) {
      if (it && it.eventId !== undefined && it.eventId !== null) present.set(String(it.eventId), it.eventId);
    });
    sess.deadIds = present;
    Array.from(sess.selected).forEach(function (k) { if (!present.has(k)) sess.selected.delete(k); });
  }

  function updateDeadButtons() {
    var selected = sess ? sess.selected.size : 0;
    var total = sess ? sess.deadTotal : 0;
    $('redeliver-selected').disabled = selected === 0;
    setText($('redeliver-selected'), selected ? 'Redeliver selected (' + selected + ')' : 'Redeliver selected');
    $('redeliver-all').disabled = total === 0;
    var boxes = $('dead-table').tBodies[0].querySelectorAll('input[type=checkbox]:not([disabled])');
    var all = $('dead-select-all');
    all.checked = boxes.length > 0 && selected === boxes.length;
    all.indeterminate = selected > 0 && selected < boxes.length;
  }

  function onDeadCheck(ev) {
    var box = ev.target;
    if (!sess || !box || box.type !== 'checkbox') return;
    var key = box.getAttribute('data-event-id');
    if (box.checked) sess.selected.add(key); else sess.selected.delete(key);
    updateDeadButtons();
  }

  function onDeadSelectAll() {
    if (!sess) return;
    var on = $('dead-select-all').checked;
    $('dead-table').tBodies[0].querySelectorAll('input[type=checkbox]:not([disabled])').forEach(function (box) {
      box.checked = on;
      var key = box.getAttribute('data-event-id');
      if (on) sess.selected.add(key); else sess.selected.delete(key);
    });
    updateDeadButtons();
  }

  async function allDeadIds(id) {
    var ids = [];
    var limit = 200;
    for (var p = 1; p <= 50; p++) {
      var data = await api('GET', qs('events/dead-letters', { clientId: id, page: p, limit: limit }));
      var items = Array.isArray(data.events) ? data.events : [];
      items.forEach(function (it) { if (it && it.eventId !== undefined && it.eventId !== null) ids.push(it.eventId); });
      var total = num(data.pagination && data.pagination.total, 0);
      if (items.length < limit || p * limit >= total) break;
    }
    return ids;
  }

  async function redeliver(id, ids) {
    var queued = 0;
    for (var i = 0; i < ids.length; i += 200) {
      var r = await api('POST', 'events/redeliver', { body: { clientId: id, eventIds: ids.slice(i, i + 200) } });
      queued += num(r.queued, 0);
    }
    return queued;
  }

  async function redeliverAction(btn, pickIds) {
    var out = $('redeliver-result');
    var alive = guard();
    var id = sess.id;
    setMsg(out, '');
    await withBusy(btn, async function () {
      try {
        var ids = await pickIds(id);
        if (!ids.length) { setMsg(out, 'Nothing to redeliver', 'info'); return; }
        var queued = await redeliver(id, ids);
        if (!alive()) return;
        setMsg(out, 'Queued ' + queued, 'ok');
        sess.selected.clear();
        clearRendered($('dead-table').tBodies[0]);
        await loadDead(id, alive);
      } catch (e) {
        if (!e.silent && alive()) setMsg(out, errText(e), 'error');
      }
    });
    if (alive()) updateDeadButtons();
  }

  function redeliverSelected() {
    return redeliverAction($('redeliver-selected'), function () {
      var map = sess.deadIds || new Map();
      return Promise.resolve(Array.from(sess.selected).map(function (k) { return map.has(k) ? map.get(k) : k; }));
    });
  }

  function redeliverAll() {
    return redeliverAction($('redeliver-all'), allDeadIds);
  }

  async function loadRooms(id, alive) {
    var tbody = $('rooms-table').tBodies[0];
    var note = $('rooms-note');
    try {
      var data = await api('GET', qs('chatrooms', { clientId: id }));
      if (!alive()) return;
      var rooms = Array.isArray(data.chatRooms) ? data.chatRooms : [];
      if (!rooms.length) {
        setMsg(note, 'No hosted inbox, or no chats in it yet. The hosted inbox works when the session has a workspace id (orgId) and its webhook points at the hosted receiver.');
        $('rooms-wrap').hidden = true;
        return;
      }
      var shown = rooms.slice(0, 100);
      setMsg(note, rooms.length > shown.length ? 'Showing ' + shown.length + ' of ' + rooms.length + ' chats, newest activity first.' : '');
      $('rooms-wrap').hidden = false;
      renderIfChanged(tbody, shown, function () {
        tbody.replaceChildren.apply(tbody, shown.map(roomRow));
      });
    } catch (e) {
      if (e.silent || !alive()) return;
      setMsg(note, e.status === 0 ? errText(e) : 'No hosted inbox');
      note.setAttribute('title', errText(e));
      $('rooms-wrap').hidden = true;
    }
  }

  // The account's labels (a session that is not paired has none to show).
  async function loadLabels(id, alive) {
    var list = $('label-list');
    try {
      var data = await api('GET', qs('labels', { clientId: id }));
      if (!alive()) return;
      var labels = Array.isArray(data.labels) ? data.labels : [];
      renderIfChanged(list, labels, function () {
        list.replaceChildren.apply(list, labels.map(function (l) {
          var chats = Array.isArray(l.chats) ? l.chats.length : 0;
          return h('li', { 'data-label-id': l.id },
            orDash(l.name) + ' (' + l.id + ', colour ' + fmtNum(l.color) + ', ' + fmtNum(chats) + (chats === 1 ? ' chat)' : ' chats)'));
        }));
      });
    } catch (e) {
      if (e.silent || !alive()) return;
      clearRendered(list);
    }
  }

  async function submitLabel() {
    var out = $('label-result');
    var name = $('label-name').value.trim();
    var color = Number($('label-color').value);
    setMsg(out, '');
    if (!name) {
      setMsg(out, 'Name the label.', 'error');
      return;
    }
    if (!Number.isInteger(color) || color < 0 || color > 19) {
      setMsg(out, 'The colour is a number from 0 to 19.', 'error');
      return;
    }
    var alive = guard();
    var id = sess.id;
    await withBusy($('label-submit'), async function () {
      try {
        var r = await api('POST', 'set-label', { body: { clientId: id, name: name, color: color } });
        if (!alive()) return;
        setMsg(out, 'Created label ' + orDash(r.label && r.label.id) + '.', 'ok');
        $('label-name').value = '';
        await loadLabels(id, alive);
      } catch (e) {
        if (!e.silent && alive()) setMsg(out, errText(e), 'error');
      }
    });
  }

  function roomRow(r) {
    r = r || {};
    var unread = num(r.unreadCount, 0);
    var last = r.lastMessage ? String(r.lastMessage) : '';
    return h('tr', { 'data-chat-room-id': r.chatRoomId || null },
      h('td', { class: 'wrap', title: r.chatRoomId || null }, orDash(r.name)),
      h('td', {}, r.isGroup ? 'group' : DASH),
      h('td', { class: 'text', title: last || null },
        r.lastMessageFromMe && last ? h('span', { class: 'tag' }, 'me') : null, last || DASH),
      h('td', { class: 'num' }, unread > 0 ? h('span', { class: 'unread' }, String(unread)) : '0'),
      h('td', {}, timeEl(r.lastMessageAt)));
  }

  /* QR and phone pairing */

  async function refreshQr() {
    if (!sess || sess.status === 'connected') return;
    var alive = guard();
    try {
      var r = await api('GET', qs('qr', { clientId: sess.id }));
      if (!alive()) return;
      setMsg($('qr-error'), '');
      if (r.status) setSessionStatus(r.status);
      showQr(typeof r.qr === 'string' ? r.qr : '');
    } catch (e) {
      if (e.silent || !alive()) return;
      showQr('');
      setMsg($('qr-error'), e.status === 404
        ? 'The session is not running (' + errText(e) + '). Use “Start / reconnect” to get a QR code.'
        : errText(e), 'error');
    }
  }

  // Shows a QR data-URL, replacing the image only when the code changed.
  function showQr(src) {
    var img = $('qr-image');
    if (typeof src === 'string' && /^data:image\//i.test(src)) {
      if (img.getAttribute('src') !== src) img.setAttribute('src', src);
      img.hidden = false;
      setText($('qr-note'), 'Scan this code with the phone.');
      return;
    }
    img.hidden = true;
    img.removeAttribute('src');
    var s = sess && sess.status;
    setText($('qr-note'), !s || s === 'initializing' || s === 'qr'
      ? 'Waiting for the QR code…'
      : 'No QR code while the status is “' + s + '”.');
  }

  async function submitPairPhone() {
    var err = $('pair-error');
    var phone = $('pair-phone').value.replace(/[\s\-().+]/g, '');
    setMsg(err, '');
    if (!/^\d{6,15}$/.test(phone)) {
      setMsg(err, 'Enter the phone number with its country code, digits only (for example 4917012345678).', 'error');
      return;
    }
    var alive = guard();
    await withBusy($('pair-phone-submit'), async function () {
      try {
        var r = await api('POST', 'pair-phone', { body: { clientId: sess.id, phone: phone } });
        if (!alive()) return;
        setText($('pair-code'), r.code ? String(r.code) : DASH);
        $('pair-code-box').hidden = false;
      } catch (e) {
        if (!e.silent && alive()) setMsg(err, errText(e), 'error');
      }
    });
  }

  async function startSession() {
    var out = $('start-result');
    var alive = guard();
    setMsg(out, '');
    await withBusy($('session-start'), async function () {
      try {
        var r = await api('POST', qs('start', { clientId: sess.id }), { body: {} });
        if (!alive()) return;
        setMsg(out, 'Started (status ' + orDash(r.status) + ')', 'ok');
        if (r.status) setSessionStatus(r.status);
      } catch (e) {
        if (!e.silent && alive()) setMsg(out, errText(e), 'error');
      }
    });
  }

  /* Test message and webhook settings */

  async function submitSend() {
    var out = $('send-result');
    var to = $('send-to').value.trim();
    var body = $('send-body').value;
    setMsg(out, '');
    if (!to || !body.trim()) { setMsg(out, 'Enter a recipient and a text.', 'error'); return; }
    var alive = guard();
    await withBusy($('send-submit'), async function () {
      try {
        var r = await api('POST', 'send-message', { body: { clientId: sess.id, to: to, body: body } });
        if (!alive()) return;
        setMsg(out, 'Sent ' + orDash(r.messageId) + (r.warning ? ' (warning: ' + r.warning + ')' : ''), 'ok');
        $('send-body').value = '';
      } catch (e) {
        if (!e.silent && alive()) setMsg(out, errText(e), 'error');
      }
    });
  }

  async function submitPresence() {
    var out = $('presence-result');
    var presence = $('presence-state').value;
    setMsg(out, '');
    var alive = guard();
    await withBusy($('presence-submit'), async function () {
      try {
        var r = await api('POST', 'set-presence', { body: { clientId: sess.id, presence: presence } });
        if (!alive()) return;
        setMsg(out, 'Saved. The account shows as ' + r.presence + '.', 'ok');
      } catch (e) {
        if (!e.silent && alive()) setMsg(out, errText(e), 'error');
      }
    });
  }

  // What a session does with calls, for its details.
  function callsText(calls) {
    if (!calls || !calls.reject) return 'ring';
    return calls.replyText ? 'rejected, with a reply' : 'rejected';
  }

  // A session's own proxy, for its details (never its credentials).
  function proxyText(proxy) {
    if (!proxy) return 'none (the deployment\'s)';
    return String(proxy.url) + (proxy.credentials ? ' (with credentials)' : '');
  }

  // Sets the session's proxy (url) or removes it (null).
  async function saveProxy(url, btn) {
    var out = $('proxy-result');
    setMsg(out, '');
    var alive = guard();
    await withBusy(btn, async function () {
      try {
        var r = await api('POST', 'set-proxy', { body: { clientId: sess.id, proxyUrl: url } });
        if (!alive()) return;
        $('proxy-url').value = '';
        setMsg(out, r.proxy ? 'Saved. The session reconnects through ' + r.proxy.url + '.' : 'Removed. The session reconnects without it.', 'ok');
      } catch (e) {
        if (!e.silent && alive()) setMsg(out, errText(e), 'error');
      }
    });
  }

  async function submitProxy() {
    var url = $('proxy-url').value.trim();
    if (!url) {
      setMsg($('proxy-result'), 'Type the proxy URL, or remove the one set.', 'error');
      return;
    }
    await saveProxy(url, $('proxy-submit'));
  }

  async function submitStatus() {
    var out = $('status-result');
    var body = $('status-body').value.trim();
    var audience = $('status-audience').value.split(',').map(function (t) { return t.trim(); }).filter(Boolean);
    setMsg(out, '');
    if (!body) {
      setMsg(out, 'Type the status text.', 'error');
      return;
    }
    var alive = guard();
    await withBusy($('status-submit'), async function () {
      try {
        var r = await api('POST', 'send-status', { body: {
          clientId: sess.id, body: body, backgroundColor: $('status-color').value,
          audience: audience.length ? audience : null } });
        if (!alive()) return;
        setMsg(out, 'Posted ' + orDash(r.messageId) + ' to ' + fmtNum(r.audience) + (r.audience === 1 ? ' contact.' : ' contacts.'), 'ok');
        $('status-body').value = '';
        var del = $('status-delete');
        del.dataset.messageId = r.messageId;
        del.hidden = false;
      } catch (e) {
        if (!e.silent && alive()) setMsg(out, errText(e), 'error');
      }
    });
  }

  // Deletes the status just posted, for everyone it was shown to.
  async function deleteStatus() {
    var out = $('status-result');
    var del = $('status-delete');
    var id = del.dataset.messageId;
    if (!id) return;
    var alive = guard();
    await withBusy(del, async function () {
      try {
        await api('POST', 'delete-status', { body: { clientId: sess.id, messageId: id } });
        if (!alive()) return;
        del.hidden = true;
        delete del.dataset.messageId;
        setMsg(out, 'Deleted ' + id + '.', 'ok');
      } catch (e) {
        if (!e.silent && alive()) setMsg(out, errText(e), 'error');
      }
    });
  }

  async function submitCalls() {
    var out = $('calls-result');
    var reject = $('calls-mode').value === 'reject';
    var reply = $('calls-reply').value.trim();
    setMsg(out, '');
    if (!reject && reply) {
      setMsg(out, 'A reply is sent only after a rejection: choose "rejected as they come" or clear the text.', 'error');
      return;
    }
    var alive = guard();
    await withBusy($('calls-submit'), async function () {
      try {
        var r = await api('POST', 'set-call-rejection', { body: { clientId: sess.id, reject: reject, replyText: reply || null } });
        if (!alive()) return;
        setMsg(out, r.reject ? 'Saved. Calls are rejected as they come.' : 'Saved. Calls ring.', 'ok');
      } catch (e) {
        if (!e.silent && alive()) setMsg(out, errText(e), 'error');
      }
    });
  }

  async function submitWebhook() {
    var out = $('webhook-result');
    var url = $('webhook-url').value.trim();
    var token = $('webhook-token').value.trim();
    var poll = $('poll-lookup-url').value.trim();
    var hadPoll = !!(sess.row && sess.row.webhook && sess.row.webhook.pollLookupUrl);
    var typed = $('webhook-types').value.split(',').map(function (t) { return t.trim(); }).filter(Boolean);
    var hadTypes = typesText(sess.row && sess.row.webhook && sess.row.webhook.types);
    var body = { clientId: sess.id, webhookUrl: url };
    if (token) body.webhookToken = token;
    if (poll || hadPoll) body.pollLookupUrl = poll; // an empty value clears an existing one
    setMsg(out, '');
    var alive = guard();
    await withBusy($('webhook-submit'), async function () {
      try {
        var r = await api('POST', 'set-webhook', { body: body });
        if (!alive()) return;
        if (typed.join(', ') !== hadTypes) {
          await api('POST', 'set-webhook-types', { body: { clientId: sess.id, types: typed.length ? typed : null } });
          if (!alive()) return;
        }
        $('webhook-token').value = '';
        sess.webhookDirty = false;
        setMsg(out, r.webhookUrl ? 'Saved. Events go to ' + r.webhookUrl : 'Saved. Delivery is stopped (no URL).', 'ok');
      } catch (e) {
        if (!e.silent && alive()) setMsg(out, errText(e), 'error');
      }
    });
  }

  /* Danger zone */

  var dialogBusy = false;

  function openDialog() {
    if (!sess) return;
    var dlg = $('confirm-dialog');
    setText($('confirm-client'), sess.id);
    setMsg($('confirm-error'), '');
    if (typeof dlg.showModal === 'function') { if (!dlg.open) dlg.showModal(); } else dlg.setAttribute('open', '');
    $('confirm-no').focus();
  }

  function closeDialog() {
    var dlg = $('confirm-dialog');
    if (!dlg.open) return;
    if (typeof dlg.close === 'function') dlg.close(); else dlg.removeAttribute('open');
  }

  async function confirmDisconnect() {
    if (!sess || dialogBusy) return;
    var id = sess.id;
    var alive = guard();
    dialogBusy = true;
    $('confirm-no').disabled = true;
    try {
      await withBusy($('confirm-yes'), async function () {
        try {
          var r = await api('POST', 'disconnect', { body: { clientId: id } });
          var warn = r.warning ? ' Warning: ' + r.warning : '';
          closeDialog();
          if (auth() && auth().clientId) { signOut('Session deleted.' + warn); return; }
          if (!alive()) return;
          showFlash('Session ' + id + ' deleted.' + warn, warn ? 'warn' : 'ok', true);
          location.hash = '#/sessions';
        } catch (e) {
          if (!e.silent) setMsg($('confirm-error'), errText(e), 'error');
        }
      });
    } finally {
      dialogBusy = false;
      $('confirm-no').disabled = false;
    }
  }

  /* ---------- #/cluster ---------- */

  var MAX_SAMPLES = 60;
  var samples = []; // last cluster samples, kept in memory only
  var CHARTS = [
    ['connected', 'Connected sessions'],
    ['pending', 'Pending events'],
    ['dead', 'Dead letters'],
    ['disconnects', 'Disconnects, last hour'],
    ['load', 'Total worker load']
  ];

  function enterCluster() {
    document.title = 'Cluster · Parley console';
    renderCharts();
    every(5000, loadCluster);
  }

  async function loadCluster() {
    var alive = guard();
    try {
      var c = await api('GET', 'cluster');
      if (!alive()) return;
      setMsg($('cluster-error'), '');
      addSample(c);
      renderCluster(c);
    } catch (e) {
      if (!e.silent && alive()) setMsg($('cluster-error'), errText(e), 'error');
    }
  }

  function workersOf(c) {
    return Array.isArray(c.workers) ? c.workers.filter(Boolean) : [];
  }

  function addSample(c) {
    var s = c.sessions || {};
    var ev = c.events || {};
    samples.push({
      connected: num(s.connected, 0),
      pending: num(ev.pending, 0),
      dead: num(ev.deadLetters, 0),
      disconnects: num(c.disconnectsLastHour, 0),
      load: workersOf(c).reduce(function (sum, w) { return sum + num(w.load, 0); }, 0)
    });
    while (samples.length > MAX_SAMPLES) samples.shift();
  }

  function renderCluster(c) {
    setText($('cluster-meta'), 'Answered by ' + orDash(c.podName) + ' · mode ' + orDash(c.mode));
    renderTotals(c);
    renderDeps(c.dependencies || {});
    renderApis(Array.isArray(c.apiPods) ? c.apiPods : [], c.podName);
    renderWorkers(workersOf(c));
    renderCharts();
  }

  function renderTotals(c) {
    var el = $('cluster-totals');
    var s = c.sessions || {};
    var ev = c.events || {};
    var stats = [
      ['Sessions', s.total, ''],
      ['Connected', s.connected, 'ok'],
      ['Failed', s.failed, num(s.failed, 0) > 0 ? 'bad' : ''],
      ['Pending events', ev.pending, ''],
      ['Dead letters', ev.deadLetters, num(ev.deadLetters, 0) > 0 ? 'bad' : ''],
      ['Disconnects, last hour', c.disconnectsLastHour, '']
    ];
    renderIfChanged(el, stats, function () {
      el.replaceChildren.apply(el, stats.map(function (st) {
        return h('div', { class: 'stat', 'data-tone': st[2] || null },
          h('span', { class: 'stat-label' }, st[0]),
          h('strong', { class: 'stat-value' }, fmtNum(st[1])));
      }));
    });
  }

  function renderDeps(deps) {
    var el = $('cluster-deps');
    var order = ['database', 'bus', 'leases', 'storage', 'events'];
    var keys = order.filter(function (k) { return k in deps; })
      .concat(Object.keys(deps).filter(function (k) { return order.indexOf(k) < 0; }));
    renderIfChanged(el, deps, function () {
      if (!keys.length) { el.replaceChildren(h('li', { class: 'muted' }, 'No dependency report')); return; }
      el.replaceChildren.apply(el, keys.map(function (k) {
        var ok = deps[k] === true;
        return h('li', { 'data-ok': ok ? 'true' : 'false' },
          h('span', { class: 'dot', 'aria-hidden': 'true' }),
          h('span', { class: 'dep-name' }, k),
          h('span', { class: 'dep-state' }, ok ? 'ok' : 'down'));
      }));
    });
  }

  function renderApis(pods, self) {
    var el = $('cluster-apis');
    renderIfChanged(el, { pods: pods, self: self }, function () {
      if (!pods.length) { el.replaceChildren(h('li', { class: 'muted' }, 'No API pods reported')); return; }
      el.replaceChildren.apply(el, pods.map(function (p) {
        var name = p && p.name ? String(p.name) : DASH;
        return h('li', {}, h('span', { class: 'pod-name' }, name),
          name === self ? h('span', { class: 'tag' }, 'answered') : null);
      }));
    });
  }

  function renderWorkers(workers) {
    var tbody = $('cluster-workers').tBodies[0];
    var totalSessions = workers.reduce(function (sum, w) { return sum + num(w.sessions, 0); }, 0);
    renderIfChanged(tbody, workers, function () {
      if (!workers.length) { tbody.replaceChildren(emptyRow(5, 'No workers (single-process mode runs sessions itself).')); return; }
      tbody.replaceChildren.apply(tbody, workers.map(function (w) {
        var share = totalSessions > 0 ? num(w.sessions, 0) / totalSessions : 0;
        var pct = Math.round(share * 100);
        var fill = h('span', { class: 'bar-fill' });
        fill.style.width = pct + '%';
        return h('tr', {},
          h('td', {}, orDash(w.name)),
          h('td', { class: 'num' }, fmtNum(w.load)),
          h('td', { class: 'num' }, fmtNum(w.sessions)),
          h('td', { class: 'num' }, fmtNum(w.connected)),
          h('td', { class: 'share' },
            h('span', { class: 'bar', role: 'img', 'aria-label': pct + '% of worker sessions' }, fill),
            h('span', { class: 'bar-pct' }, pct + '%')));
      }));
    });
  }

  function renderCharts() {
    var el = $('cluster-charts');
    if (!samples.length) {
      el.replaceChildren(h('p', { class: 'muted' }, 'Collecting samples…'));
      return;
    }
    el.replaceChildren.apply(el, CHARTS.map(function (ch) {
      return chart(ch[1], samples.map(function (s) { return s[ch[0]]; }));
    }));
  }

  // One small SVG line chart; the newest sample sits at the right edge.
  function chart(title, values) {
    var W = 240, H = 64, P = 5;
    var current = values[values.length - 1];
    var peak = Math.max.apply(null, values);
    var max = Math.max(peak, 1);
    var step = W / (MAX_SAMPLES - 1);
    var offset = MAX_SAMPLES - values.length;
    var pts = values.map(function (v, i) {
      return [(offset + i) * step, H - P - (v / max) * (H - 2 * P)];
    });
    var line = pts.map(function (p) { return p[0].toFixed(1) + ',' + p[1].toFixed(1); }).join(' ');
    var first = pts[0], lastPt = pts[pts.length - 1];
    var area = first[0].toFixed(1) + ',' + (H - P) + ' ' + line + ' ' + lastPt[0].toFixed(1) + ',' + (H - P);
    var graph = svg('svg', {
      class: 'spark', viewBox: '0 0 ' + W + ' ' + H, role: 'img',
      'aria-label': title + ': ' + fmtNum(current) + ' now, peak ' + fmtNum(peak) + ' over ' + values.length + ' samples'
    },
      svg('line', { class: 'spark-grid', x1: 0, y1: P, x2: W, y2: P }),
      svg('line', { class: 'spark-base', x1: 0, y1: H - P, x2: W, y2: H - P }),
      values.length > 1 ? svg('polygon', { class: 'spark-area', points: area }) : null,
      svg('polyline', { class: 'spark-line', points: line }),
      svg('circle', { class: 'spark-dot', cx: lastPt[0].toFixed(1), cy: lastPt[1].toFixed(1), r: 2.5 }));
    return h('figure', { class: 'chart' },
      h('figcaption', {},
        h('span', { class: 'chart-title' }, title),
        h('strong', { class: 'chart-value' }, fmtNum(current))),
      graph,
      h('p', { class: 'chart-foot' }, 'peak ' + fmtNum(peak)));
  }

  /* ---------- wiring ---------- */

  function bind() {
    onSubmit($('signin-form'), submitSignin);
    $('signin-as-session').addEventListener('change', toggleSigninClient);
    onClick($('signout'), function () { signOut('Signed out.'); });

    $('sessions-search').addEventListener('input', onSearchInput);
    onClick($('sessions-prev'), function () { return turnPage(-1); });
    onClick($('sessions-next'), function () { return turnPage(1); });
    onClick($('new-session'), function () { toggleNewSession($('new-session-form').hidden); });
    onClick($('new-cancel'), function () { toggleNewSession(false); });
    onSubmit($('new-session-form'), submitNewSession);

    onSubmit($('pair-phone-form'), submitPairPhone);
    onClick($('session-start'), startSession);
    onSubmit($('send-form'), submitSend);
    onSubmit($('webhook-form'), submitWebhook);
    onSubmit($('presence-form'), submitPresence);
    onSubmit($('calls-form'), submitCalls);
    onSubmit($('proxy-form'), submitProxy);
    onClick($('proxy-remove'), function () { return saveProxy(null, $('proxy-remove')); });
    onSubmit($('status-form'), submitStatus);
    onClick($('status-delete'), deleteStatus);
    onSubmit($('label-form'), submitLabel);
    $('webhook-form').addEventListener('input', function () { if (sess) sess.webhookDirty = true; });
    $('dead-table').tBodies[0].addEventListener('change', onDeadCheck);
    $('dead-select-all').addEventListener('change', onDeadSelectAll);
    onClick($('redeliver-selected'), redeliverSelected);
    onClick($('redeliver-all'), redeliverAll);

    onClick($('disconnect'), openDialog);
    onClick($('confirm-no'), closeDialog);
    onClick($('confirm-yes'), confirmDisconnect);
    $('confirm-dialog').addEventListener('cancel', function (ev) { if (dialogBusy) ev.preventDefault(); });

    ['click', 'keydown', 'input'].forEach(function (type) {
      document.addEventListener(type, function () { touch(false); }, { capture: true, passive: true });
    });
    document.addEventListener('visibilitychange', function () { if (!document.hidden) checkIdle(); });
    setInterval(checkIdle, 15000);

    window.addEventListener('hashchange', function () { route(true); });
    window.addEventListener('unhandledrejection', function (ev) {
      ev.preventDefault();
      if (!(ev.reason && ev.reason.silent)) showFlash(errText(ev.reason), 'error');
    });
  }

  function start() {
    bind();
    var a = auth();
    if (a && idleExpired()) { signOut(IDLE_MSG); return; }
    route(false);
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
})();
