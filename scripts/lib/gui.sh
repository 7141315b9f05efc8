# shellcheck shell=bash
# A virtual X display for the GUI tests (tests/gui). Source after common.sh.

# Debian packages of the GUI tests: Xvfb (display), xdotool (find/resize windows), imagemagick (`import`
# screenshots, `identify`), and x11-apps (xwd, xclock: for looking into a failure by hand on the same display).
GUI_PACKAGES=(xvfb xdotool imagemagick x11-apps)

# ensure_gui_tools: install the packages above when a tool is missing (as root, with apt-get: a fresh CI machine
# gets them on its first GUI test run, which needs the network), or say how to install them.
ensure_gui_tools() {
  local tool missing=0
  for tool in Xvfb xdotool import identify; do command -v "$tool" >/dev/null 2>&1 || missing=1; done
  ((missing)) || return 0
  if [[ "$(id -u)" == 0 ]] && command -v apt-get >/dev/null 2>&1; then
    info "installing ${GUI_PACKAGES[*]} for the GUI tests…"
    local log="$TARGET_DIR/gui-packages.log"
    mkdir -p "$TARGET_DIR"
    # the package lists of a fresh machine may be missing or stale: update once when the first try fails
    if ! DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${GUI_PACKAGES[@]}" >"$log" 2>&1; then
      { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${GUI_PACKAGES[@]}"; } \
        >>"$log" 2>&1 || die "installing ${GUI_PACKAGES[*]} failed (log: $log)"
    fi
  else
    die "the GUI tests need Xvfb, xdotool and ImageMagick; install them with: sudo apt-get install -y ${GUI_PACKAGES[*]}"
  fi
}

# start_xvfb DIR: start Xvfb on the first free display (Xvfb picks it: no clash with another X server on the
# machine, even outside a network namespace, whose X sockets are files in /tmp/.X11-unix), export DISPLAY, and
# set XVFB_PID. 1600x1000: room for JMeter's main window and its forms.
start_xvfb() {
  local dir="$1" deadline=$((SECONDS + 20)) display=""
  mkdir -p "$dir"
  rm -f "$dir/xvfb.display"
  Xvfb -displayfd 3 -screen 0 1600x1000x24 -nolisten tcp 3>"$dir/xvfb.display" >"$dir/xvfb.log" 2>&1 &
  XVFB_PID=$!
  until display="$(head -n1 "$dir/xvfb.display" 2>/dev/null)" && [[ "$display" =~ ^[0-9]+$ ]]; do
    if ! kill -0 "$XVFB_PID" 2>/dev/null || ((SECONDS >= deadline)); then
      die "Xvfb did not start (log: $dir/xvfb.log)"
    fi
    sleep 0.2
  done
  export DISPLAY=":$display"
}

# stop_xvfb: end the Xvfb that start_xvfb started.
stop_xvfb() {
  if [[ -n "${XVFB_PID:-}" ]]; then
    kill "$XVFB_PID" 2>/dev/null
    wait "$XVFB_PID" 2>/dev/null
    XVFB_PID=""
  fi
  return 0
}
