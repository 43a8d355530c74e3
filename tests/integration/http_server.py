#!/usr/bin/env python3
"""A small HTTP server for the install tests: serves a folder on 127.0.0.1, supports Range,
and misbehaves on request: answers a status, dies mid-file, stalls, ignores Range.

    http_server.py --root DIR [--timeout SECONDS] [--log FILE] [--rule GLOB=ACTION[,times=N]]...

ACTION is one of
    status:CODE          answer CODE with no body (e.g. status:404, status:503)
    die:BYTES            send the headers and BYTES of the body, then drop the connection
    stall:BYTES:SECONDS  send BYTES of the body, then send nothing for SECONDS
    hold:BYTES:FILE      send BYTES of the body, log "HELD PATH", then send nothing until FILE
                         exists (the test creates it once it has seen what it waits for), and
                         the rest after it; a client that hangs up meanwhile is logged as SENT
    norange              ignore Range headers (always answer 200 with the whole file)
    slow:BYTES_PER_SEC   send the body at about this rate (slow:4 is a drip); the log gets "DONE PATH"
                         when such a body was sent whole
    endless              answer 200 without Content-Length and send zeros until the client
                         hangs up (or the server's timeout); the file need not exist
    pad:BYTES            announce and send BYTES more than the file holds (zeros at its end)
A rule applies to the first N matching requests when times=N is given, else to all.
A request for a folder ("/dir/") is answered with its index.html, when the test wrote one.
The server binds port 0, prints the port on stdout, and exits by itself after --timeout
seconds (default 300). --log appends one line per request: "METHOD PATH RANGE STATUS", and for a body that was cut
short or endless, "SENT PATH BYTES" once the connection is over.
"""
import argparse
import fnmatch
import http.server
import os
import select
import socket
import socketserver
import sys
import threading
import time
import urllib.parse


class Rule:
    def __init__(self, text):
        glob, _, action = text.partition("=")
        parts = action.split(",")
        self.glob = glob
        self.action = parts[0]
        self.times = None
        for extra in parts[1:]:
            key, _, value = extra.partition("=")
            if key == "times":
                self.times = int(value)
        self.lock = threading.Lock()

    def take(self, path):
        if not fnmatch.fnmatch(path, self.glob):
            return False
        with self.lock:
            if self.times is None:
                return True
            if self.times > 0:
                self.times -= 1
                return True
            return False


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "cvm-test-server"

    def log_message(self, fmt, *args):  # keep stderr quiet
        pass

    def record(self, status):
        if self.server.log_path:
            with self.server.log_lock, open(self.server.log_path, "a") as log:
                log.write("%s %s %s %s\n" % (self.command, self.path,
                                             self.headers.get("Range", "-"), status))

    def record_sent(self, path, sent):
        if self.server.log_path:
            with self.server.log_lock, open(self.server.log_path, "a") as log:
                log.write("SENT %s %d\n" % (path, sent))

    def wait_for(self, path, gate):
        """Holds the body until the file `gate` exists (True), or the client hangs up (False)."""
        if self.server.log_path:
            with self.server.log_lock, open(self.server.log_path, "a") as log:
                log.write("HELD %s\n" % path)
        while not os.path.exists(gate):
            readable, _, _ = select.select([self.connection], [], [], 0.05)
            if readable:
                try:
                    if not self.connection.recv(1, socket.MSG_PEEK):
                        return False
                except OSError:
                    return False
                time.sleep(0.05)  # the client sent more: not a hang-up
        return True

    def send_endless(self, path):
        self.record(200)
        self.send_response(200)
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        block, sent = b"\0" * 65536, 0
        try:
            while True:
                self.wfile.write(block)
                sent += len(block)
        except OSError:
            pass
        finally:
            self.record_sent(path, sent)

    def do_HEAD(self):
        self.handle_request(head=True)

    def do_GET(self):
        self.handle_request(head=False)

    def handle_request(self, head):
        path = urllib.parse.unquote(urllib.parse.urlparse(self.path).path)
        actions = [r.action for r in self.server.rules if r.take(path)]
        for action in actions:
            if action.startswith("status:"):
                code = int(action.split(":")[1])
                self.record(code)
                self.send_response(code)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
        if "endless" in actions and not head:
            self.send_endless(path)
            return
        full = os.path.realpath(os.path.join(self.server.root, path.lstrip("/")))
        if os.path.isdir(full) and path.endswith("/"):
            full = os.path.join(full, "index.html")  # a folder's listing, as the test wrote it
        if not full.startswith(self.server.root + os.sep) or not os.path.isfile(full):
            self.record(404)
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        pad = 0
        for action in actions:
            if action.startswith("pad:"):
                pad = int(action.split(":")[1])
        size = os.path.getsize(full) + pad
        start, end = 0, size - 1
        status = 200
        range_header = self.headers.get("Range")
        if range_header and "norange" not in actions and range_header.startswith("bytes="):
            first, _, last = range_header[6:].split(",")[0].partition("-")
            try:
                start = int(first) if first else max(0, size - int(last))
                end = int(last) if (first and last) else size - 1
            except ValueError:
                start, end = 0, size - 1
            if start >= size:
                self.record(416)
                self.send_response(416)
                self.send_header("Content-Range", "bytes */%d" % size)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            end = min(end, size - 1)
            status = 206
        length = end - start + 1
        self.record(status)
        self.send_response(status)
        self.send_header("Content-Length", str(length))
        self.send_header("Accept-Ranges", "bytes")
        if status == 206:
            self.send_header("Content-Range", "bytes %d-%d/%d" % (start, end, size))
        self.end_headers()
        if head:
            return
        limit, stall, rate, hold = None, None, None, None
        for action in actions:
            fields = action.split(":", 2)
            if fields[0] == "die":
                limit = int(fields[1])
            elif fields[0] == "stall":
                limit, stall = int(fields[1]), float(fields[2])
            elif fields[0] == "slow":
                rate = int(fields[1])
            elif fields[0] == "hold":
                hold = (int(fields[1]), fields[2])
        sent = 0
        with open(full, "rb") as f:
            f.seek(start)
            remaining = length
            while remaining > 0:
                chunk = 65536 if rate is None else max(1, min(65536, rate // 10))
                if limit is not None:
                    chunk = min(chunk, limit - sent)
                    if chunk <= 0:
                        break
                if hold is not None:
                    if sent >= hold[0]:
                        if not self.wait_for(path, hold[1]):
                            self.record_sent(path, sent)
                            return
                        hold = None
                    else:
                        chunk = min(chunk, hold[0] - sent)
                data = f.read(min(chunk, remaining))
                if not data and pad:
                    data = b"\0" * min(chunk, remaining)
                if not data:
                    break
                try:
                    self.wfile.write(data)
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    self.record_sent(path, sent)
                    return
                sent += len(data)
                remaining -= len(data)
                if rate is not None:
                    time.sleep(len(data) / rate)
        if rate is not None and remaining == 0 and self.server.log_path:
            # A throttled body's end, so a test can tell which transfers overlapped.
            with self.server.log_lock, open(self.server.log_path, "a") as log:
                log.write("DONE %s\n" % path)
        if limit is not None and remaining > 0:
            if stall is not None:
                time.sleep(stall)
            # Drop the connection mid-file.
            self.close_connection = True
            try:
                self.connection.shutdown(2)
            except OSError:
                pass


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def handle_error(self, request, client_address):
        pass  # clients that hang up (timeouts under test) are expected


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", required=True)
    parser.add_argument("--timeout", type=float, default=300)
    parser.add_argument("--log")
    parser.add_argument("--rule", action="append", default=[])
    args = parser.parse_args()
    server = Server(("127.0.0.1", 0), Handler)
    server.root = os.path.realpath(args.root)
    server.rules = [Rule(r) for r in args.rule]
    server.log_path = args.log
    server.log_lock = threading.Lock()
    print(server.server_address[1], flush=True)
    timer = threading.Timer(args.timeout, lambda: os._exit(0))
    timer.daemon = True
    timer.start()
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    sys.exit(main())
