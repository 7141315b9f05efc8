#!/usr/bin/env python3
"""forward.py [--mtls CERT KEY CA] LISTEN_HOST LISTEN_PORT TARGET_HOST TARGET_PORT: a TCP forwarder, byte for byte.

The oauth suite puts it between a client and a real server to make that server vanish and come back on the
same address (kill the forwarder, start it again: the token endpoint goes down mid-test), or to reach a broker
under an address its certificate does not name (127.0.0.2). It changes nothing that passes through. It prints one line per connection, "MILLISECONDS connection" (epoch ms),
so that a test knows when its client first came.

With --mtls it is what fronts many schema registries in production (an ingress, a TLS-terminating proxy): it
serves TLS with CERT and KEY, requires a client certificate that CA signed (a handshake without one, or with
another CA's, ends there, "handshake refused: ..." on stdout), and forwards the decrypted bytes to a plain HTTP
server. The registry the suite starts cannot require client certificates itself (its build fixed that off).
"""
import socket
import ssl
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


def serve(client, tls, target):
    if tls is not None:
        try:
            client.settimeout(10)
            client = tls.wrap_socket(client, server_side=True)
            client.settimeout(None)
        except (OSError, ssl.SSLError) as e:
            print(f"handshake refused: {e}", flush=True)
            client.close()
            return
    try:
        upstream = socket.create_connection(target, timeout=5)
        upstream.settimeout(None)
    except OSError:
        client.close()
        return
    for a, b in ((client, upstream), (upstream, client)):
        threading.Thread(target=pump, args=(a, b), daemon=True).start()


def main():
    args = sys.argv[1:]
    tls = None
    if args[:1] == ["--mtls"]:
        cert, key, ca = args[1:4]
        args = args[4:]
        tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        tls.load_cert_chain(cert, key)
        tls.load_verify_locations(ca)
        tls.verify_mode = ssl.CERT_REQUIRED
    host, port, target_host, target_port = args[0], int(args[1]), args[2], int(args[3])
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    # the same port again at once after a kill: the clients' URL names it
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind((host, port))
    server.listen(64)
    print(f"forwarding {host}:{port} to {target_host}:{target_port}", flush=True)
    while True:
        client, _ = server.accept()
        print(f"{time.time() * 1000:.0f} connection", flush=True)
        # the handshake in a thread of its own: a client that stalls in it must not stop the others
        threading.Thread(target=serve, args=(client, tls, (target_host, target_port)), daemon=True).start()


if __name__ == "__main__":
    main()
