// An S3 server for the tests: s3rver (npm) on a loopback port of its own, its objects and
// multipart uploads kept in DATA_DIR, behind a front on PORT that checks each request's AWS
// Signature V4 with the one secret it knows (s3rver checks the access key, not V4 signatures),
// answers 403 SignatureDoesNotMatch as S3 does when it is wrong, and passes the request on
// otherwise. The check is written from the SigV4 specification, independently of libcurl's signing.
// Prints "ready" once both listen. Killing it is a server going away; started again on the same
// DATA_DIR it has what it had (uploads under way included).
// Usage: node --openssl-legacy-provider s3_test_server.js S3RVER_MODULE DATA_DIR BUCKET PORT SECRET
// (access key: S3RVER; the flag because s3rver makes ListObjectsV2's continuation tokens with DES,
// which OpenSSL 3 keeps in its legacy provider).
'use strict';
const http = require('http');
const crypto = require('crypto');

const [s3rverModule, dataDir, bucket, listenPort, secret] = process.argv.slice(2);
const accessKey = 'S3RVER';

const hmac = (key, text) => crypto.createHmac('sha256', key).update(text).digest();
const sha256 = (text) => crypto.createHash('sha256').update(text).digest('hex');
const encode = (text) =>
    encodeURIComponent(text).replace(/[!'()*]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase());

function canonicalQuery(query) {
    if (!query) return '';
    return query.split('&')
        .filter((p) => p.length > 0)
        .map((p) => {
            const eq = p.indexOf('=');
            const name = decodeURIComponent(eq < 0 ? p : p.slice(0, eq));
            const value = eq < 0 ? '' : decodeURIComponent(p.slice(eq + 1));
            return [encode(name), encode(value)];
        })
        .sort((a, b) => (a[0] < b[0]     ? -1 :
                             a[0] > b[0] ? 1 :
                             a[1] < b[1] ? -1 :
                             a[1] > b[1] ? 1 :
                                           0))
        .map(([n, v]) => n + '=' + v)
        .join('&');
}

// Why the request's signature is wrong, or null when it is right.
function checkSignature(req) {
    const auth = req.headers['authorization'] || '';
    const m =
        /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]{64})$/
            .exec(auth);
    if (!m) return 'no AWS4-HMAC-SHA256 authorization';
    const [, key, day, region, service, signedHeaders, signature] = m;
    if (key !== accessKey) return 'unknown access key';
    const amzDate = req.headers['x-amz-date'] || '';
    const payload = req.headers['x-amz-content-sha256'];
    if (!payload) return 'no x-amz-content-sha256';
    const [path, query] = req.url.split('?', 2);
    const headers = signedHeaders.split(';')
                        .map((h) => {
                            const value = h === 'host' ? req.headers.host : req.headers[h];
                            if (value === undefined) throw new Error('signed header missing: ' + h);
                            return h + ':' + String(value).trim().replace(/\s+/g, ' ') + '\n';
                        })
                        .join('');
    const canonical = [req.method, path, canonicalQuery(query), headers, signedHeaders, payload].join('\n');
    const scope = [day, region, service, 'aws4_request'].join('/');
    const toSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256(canonical)].join('\n');
    const signingKey = hmac(hmac(hmac(hmac('AWS4' + secret, day), region), service), 'aws4_request');
    const expected = crypto.createHmac('sha256', signingKey).update(toSign).digest('hex');
    return expected === signature ? null : 'signature differs';
}

const S3rver = require(s3rverModule);
new S3rver({port: 0, address: '127.0.0.1', directory: dataDir, silent: true, configureBuckets: [{name: bucket}]})
    .run()
    .then((address) => { startFront(address.port); },
          (e) => {
              process.stderr.write(`s3rver: ${e}\n`);
              process.exit(1);
          });

function startFront(upstreamPort) {
    http.createServer((req, res) => {
            let why;
            try {
                why = checkSignature(req);
            } catch (e) {
                why = e.message;
            }
            if (why) {
                process.stderr.write(`${req.method} ${req.url}: ${why}\n`);
                res.writeHead(403, {'Content-Type': 'application/xml'});
                res.end('<?xml version="1.0" encoding="UTF-8"?><Error><Code>SignatureDoesNotMatch</Code>' +
                        `<Message>The request signature we calculated does not match the signature you provided (${
                            why}).</Message></Error>`);
                req.resume();
                return;
            }
            const upstream = http.request(
                {host: '127.0.0.1', port: upstreamPort, method: req.method, path: req.url, headers: req.headers},
                (up) => {
                    res.writeHead(up.statusCode, up.headers);
                    up.pipe(res);
                });
            upstream.on('error', (e) => {
                res.writeHead(502);
                res.end(String(e));
            });
            req.pipe(upstream);
        })
        .listen(Number(listenPort), '127.0.0.1', () => process.stdout.write('ready\n'));
}
