#!/usr/bin/env python3
"""forward.py LISTEN_HOST LISTEN_PORT TARGET_HOST TARGET_PORT: a plain TCP forwarder, byte for byte.

The oauth suite puts it between a client and a real server to make that server vanish and come back on the
same address (kill the forwarder, start it again: the token endpoint goes down mid-test), or to reach a broker
under an address its certificate does not name (127.0.0.2). It changes nothing that passes through. It prints one line per connection, "MILLISECONDS connection" (epoch ms),
so that a test knows when its client first came.
"""
import socket
import sys
import threading
import time


def pump(src, dst):
    try:
        while data := src.recv(65536):
            dst.sendall(data)
    except OSError:
        pass
    finally:
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def main():
    host, port, target_host, target_port = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    # the same port again at once after a kill: the clients' URL names it
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind((host, port))
    server.listen(64)
    print(f"forwarding {host}:{port} to {target_host}:{target_port}", flush=True)
    while True:
        client, _ = server.accept()
        print(f"{time.time() * 1000:.0f} connection", flush=True)
        try:
            upstream = socket.create_connection((target_host, target_port), timeout=5)
            upstream.settimeout(None)
        except OSError:
            client.close()
            continue
        for a, b in ((client, upstream), (upstream, client)):
            threading.Thread(target=pump, args=(a, b), daemon=True).start()


if __name__ == "__main__":
    main()
