// A Node.js HTTP server whose event loop stalls: GET /hash derives a key with
// crypto.pbkdf2Sync on the main thread (calibrated to about SECONDS), so no
// other request is served until it returns.
//   node node_server.js PORT SECONDS
// Prints {"pid", "tid"} first (the main thread's tid is the pid).
const http = require('http');
const crypto = require('crypto');
const [port, seconds] = [Number(process.argv[2]), Number(process.argv[3])];

let t0 = process.hrtime.bigint();
crypto.pbkdf2Sync('pw', 'salt', 20000, 32, 'sha512');
const perIter = Number(process.hrtime.bigint() - t0) / 1e9 / 20000;
const iterations = Math.max(1, Math.round(seconds / perIter));

http.createServer((req, res) => {
  if (req.url === '/hash') {
    const key = crypto.pbkdf2Sync('pw', 'salt', iterations, 32, 'sha512');
    res.end(key.toString('hex'));
  } else {
    res.end('quick');
  }
}).listen(port, '127.0.0.1', () => {
  console.log(JSON.stringify({pid: process.pid, tid: process.pid}));
});
