# shellcheck shell=bash
# Drives JMeter's real GUI under Xvfb for the GUI tests (source after scripts/lib/common.sh and scripts/lib/gui.sh,
# with Xvfb started). JMeter runs with tests/gui/probe.groovy as its JSR-223 init script, which answers
# gui_cmd requests (tree, select NAME, form, title, exit) from inside the GUI; see probe.groovy.
# Typical use, e.g. for an element's form:
#   gui_open "$out/gui" plan.jmx && gui_cmd select "Kafka Producer" && gui_cmd form >form.txt &&
#     gui_screenshot "$out/my-plan-producer.png" && gui_load other.jmx && ...; gui_close

GUI_PROBE="$REPO_ROOT/tests/gui/probe.groovy"

# gui_open DIR PLAN [JMETER-ARGS...]: start the GUI on PLAN (its log DIR/jmeter.log, probe files in DIR/probe),
# wait until the probe answers and the plan's tree is loaded, and find the main window (GUI_WID). Sets GUI_PID.
gui_open() {
  local dir="$1" plan="$2"
  shift 2
  GUI_DIR="$dir"
  mkdir -p "$dir/probe"
  rm -f "$dir/probe/req" "$dir/probe/res"
  "$REPO_ROOT/scripts/jmeter" -t "$plan" -j "$dir/jmeter.log" -Jjsr223.init.file="$GUI_PROBE" \
    -Jgui.probe.dir="$dir/probe" "$@" >"$dir/jmeter.out" 2>&1 &
  GUI_PID=$!
  local deadline=$((SECONDS + 90)) tree=""
  until tree="$(gui_cmd tree 2>/dev/null)" && [[ -n "$tree" ]]; do
    if ! kill -0 "$GUI_PID" 2>/dev/null || ((SECONDS >= deadline)); then
      echo "the JMeter GUI did not come up (see $dir/jmeter.out, $dir/jmeter.log)"
      return 1
    fi
    sleep 0.5
  done
  local title
  title="$(gui_cmd title)" || return 1
  GUI_WID="$(xdotool search --onlyvisible --name "Apache JMeter" 2>/dev/null | head -n1)"
  [[ -n "$GUI_WID" ]] || { echo "no visible window named 'Apache JMeter' (title: $title)"; return 1; }
  # fill the screen (there is no window manager under Xvfb); Swing lays the window out again
  xdotool windowmove "$GUI_WID" 0 0 windowsize "$GUI_WID" 1600 1000 2>/dev/null
  sleep 1
}

# gui_load PLAN: open another plan in the running GUI (as File > Open does) and wait until the window shows it.
gui_load() {
  gui_cmd open "$1" >/dev/null || return 1
  local deadline=$((SECONDS + 30)) title
  until title="$(gui_cmd title)" && [[ "$title" == "$(basename "$1") ("* ]]; do
    ((SECONDS < deadline)) || { echo "the window still shows '$title' 30 s after opening $1"; return 1; }
    sleep 0.3
  done
}

# gui_cmd COMMAND: one probe request; prints the answer's lines, fails with the probe's error.
gui_cmd() {
  local probe="$GUI_DIR/probe" deadline=$((SECONDS + ${GUI_TIMEOUT:-30}))
  rm -f "$probe/res"
  printf '%s\n' "$*" >"$probe/req.tmp" && mv "$probe/req.tmp" "$probe/req"
  until [[ -f "$probe/res" ]]; do
    if ((SECONDS >= deadline)); then
      rm -f "$probe/req"
      echo "no answer from the GUI probe to '$*'" >&2
      return 1
    fi
    sleep 0.1
  done
  local first
  first="$(head -n1 "$probe/res")"
  if [[ "$first" != ok ]]; then
    echo "GUI probe: $first" >&2
    return 1
  fi
  tail -n +2 "$probe/res"
}

# gui_screenshot FILE: the main window as a PNG, after Swing has had a moment to paint.
gui_screenshot() {
  mkdir -p "$(dirname "$1")"
  sleep "${GUI_PAINT_DELAY:-1}"
  import -window "$GUI_WID" "$1"
}

# gui_log_errors [FROM-LINE]: the ERROR lines of the GUI's jmeter.log (from line FROM-LINE on; none expected).
gui_log_errors() {
  tail -n +"${1:-1}" "$GUI_DIR/jmeter.log" | grep -E '^[0-9-]+ [0-9:,]+ ERROR '
}

# gui_log_lines: the number of lines jmeter.log has now (for gui_log_errors' FROM-LINE).
gui_log_lines() {
  wc -l <"$GUI_DIR/jmeter.log"
}

# gui_close: end JMeter through the probe; if it does not end within 20 s, stop its processes.
gui_close() {
  [[ -n "${GUI_PID:-}" ]] || return 0
  gui_cmd exit >/dev/null 2>&1
  local deadline=$((SECONDS + 20))
  while kill -0 "$GUI_PID" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.3; done
  if kill -0 "$GUI_PID" 2>/dev/null; then
    pkill -TERM -P "$GUI_PID" 2>/dev/null # bin/jmeter's java child
    kill "$GUI_PID" 2>/dev/null
  fi
  wait "$GUI_PID" 2>/dev/null
  GUI_PID=""
}
