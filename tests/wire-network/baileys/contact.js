// An independent client on Parley's wire-level test network: Baileys (npm
// `baileys`), linked as a companion of a test contact's account, driven by
// the Rust tests over stdin/stdout, one JSON object per line.
//
//   node contact.js ws://127.0.0.1:PORT/ws/chat
//
// Out: {"event":"qr","qr"}            a QR code to scan (the contact's phone scans it)
//      {"event":"open","me"}          logged in
//      {"event":"message","id","from","text","image","mime"}  image: base64 of the decrypted file
//      {"event":"sent","ref","id"}    a command's message went out
//      {"event":"failed","ref","error"}
//      {"event":"closed","code"}      closed for good (anything but the restart after pairing)
// In:  {"ref","cmd":"text","to","text"}
//      {"ref","cmd":"image","to","data","mime","caption"}   data: base64
//      {"ref","cmd":"react","to","id","fromMe","emoji"}     a reaction to message `id` in chat `to`
//      {"ref","cmd":"revoke","to","id"}                     deletes its own message `id` for everyone
//      {"ref","cmd":"code","phone"}                         asks for a pairing code for `phone`
//                                                           instead of a QR scan (answered as "sent", id: the code)
//
// Test-only switches, as the whatsapp-rust test build has: media requests to
// https://127.0.0.1 go as http (the test CDN is plain HTTP on loopback), and
// the app-state key is marked present so events are not held back waiting
// for an initial app-state sync the test network does not serve.
'use strict';

// Node.js 18 (Debian 12's) has Web Crypto only as `crypto.webcrypto`; Baileys
// expects the global that Node.js 19 and later define.
if (!globalThis.crypto) {
  globalThis.crypto = require('crypto').webcrypto;
}

const readline = require('readline');
const axios = require('axios');
const pino = require('pino');
const { makeWASocket, initAuthCreds, downloadMediaMessage, proto } = require('baileys');

const url = process.argv[2];
if (!url || !/^ws:\/\/127\.0\.0\.1:\d+\//.test(url)) {
  console.error('usage: node contact.js ws://127.0.0.1:PORT/ws/chat (loopback only)');
  process.exit(2);
}

axios.interceptors.request.use((config) => {
  config.url = String(config.url).replace(/^https:\/\/127\.0\.0\.1:/, 'http://127.0.0.1:');
  delete config.httpsAgent;
  return config;
});

const say = (obj) => process.stdout.write(JSON.stringify(obj) + '\n');
const logger = pino({ level: process.env.BAILEYS_LOG || 'silent' }, pino.destination(2));

// Signal keys in memory, as Baileys' SignalKeyStore interface wants them.
const keys = {};
const store = {
  get: async (type, ids) => {
    const out = {};
    for (const id of ids) {
      let value = keys[type] && keys[type][id];
      if (value && type === 'app-state-sync-key') {
        value = proto.Message.AppStateSyncKeyData.fromObject(value);
      }
      if (value !== undefined) out[id] = value;
    }
    return out;
  },
  set: async (data) => {
    for (const type of Object.keys(data)) {
      keys[type] = keys[type] || {};
      for (const id of Object.keys(data[type])) {
        const value = data[type][id];
        if (value === null || value === undefined) delete keys[type][id];
        else keys[type][id] = value;
      }
    }
  },
};

const creds = initAuthCreds();
creds.myAppStateKeyId = 'AAAAAAAA';
let sock;

function connect() {
  sock = makeWASocket({
    waWebSocketUrl: url,
    auth: { creds, keys: store },
    logger,
    version: [2, 3000, 1000000000],
    browser: ['Ubuntu', 'Chrome', '22.04.4'],
    markOnlineOnConnect: false,
    fireInitQueries: false,
    syncFullHistory: false,
    shouldSyncHistoryMessage: () => false,
    qrTimeout: 120000,
  });
  sock.ev.on('creds.update', (update) => Object.assign(creds, update));
  sock.ev.on('connection.update', (update) => {
    if (update.qr) say({ event: 'qr', qr: update.qr });
    if (update.connection === 'open') say({ event: 'open', me: creds.me && creds.me.id });
    if (update.connection === 'close') {
      const code = update.lastDisconnect && update.lastDisconnect.error &&
        update.lastDisconnect.error.output && update.lastDisconnect.error.output.statusCode;
      if (code === 515) {
        connect(); // the restart a pairing ends with
      } else {
        say({ event: 'closed', code: code || 0 });
        process.exit(0);
      }
    }
  });
  sock.ev.on('messages.upsert', async ({ messages }) => {
    for (const m of messages) {
      if (!m.message || m.key.fromMe) continue;
      const msg = m.message;
      const text = msg.conversation || (msg.extendedTextMessage && msg.extendedTextMessage.text) ||
        (msg.imageMessage && msg.imageMessage.caption) || null;
      let image = null;
      let mime = null;
      if (msg.imageMessage) {
        try {
          image = (await downloadMediaMessage(m, 'buffer', {})).toString('base64');
          mime = msg.imageMessage.mimetype;
        } catch (e) {
          say({ event: 'failed', ref: m.key.id, error: `download: ${e.message}` });
        }
      }
      say({ event: 'message', id: m.key.id, from: m.key.remoteJid, text, image, mime });
    }
  });
}

async function run(command) {
  const { ref, cmd, to } = command;
  try {
    if (cmd === 'code') {
      say({ event: 'sent', ref, id: await sock.requestPairingCode(command.phone) });
      return;
    }
    let content;
    if (cmd === 'text') content = { text: command.text };
    else if (cmd === 'image') {
      content = {
        image: Buffer.from(command.data, 'base64'),
        mimetype: command.mime,
        caption: command.caption || undefined,
      };
    } else if (cmd === 'react') {
      const key = { remoteJid: to, fromMe: Boolean(command.fromMe), id: command.id };
      content = { react: { text: command.emoji, key } };
    } else if (cmd === 'revoke') {
      content = { delete: { remoteJid: to, fromMe: true, id: command.id } };
    } else throw new Error(`unknown command ${cmd}`);
    const sent = await sock.sendMessage(to, content, { linkPreview: null });
    say({ event: 'sent', ref, id: sent.key.id });
  } catch (e) {
    say({ event: 'failed', ref, error: e.message });
  }
}

readline.createInterface({ input: process.stdin }).on('line', (line) => {
  if (line.trim()) run(JSON.parse(line));
});
process.stdin.on('end', () => process.exit(0));
process.on('unhandledRejection', (e) => say({ event: 'failed', ref: null, error: String(e) }));

connect();
