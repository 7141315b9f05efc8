#!/usr/bin/env bash
# JMeter's real GUI (scripts/jmeter without -n) under Xvfb opens every shipped plan (jmeter-plans/*.jmx): the first
# from the command line (-t), the others with File > Open in the same GUI (one JMeter start: ~20 s each saved).
# - the window's title names the plan, and the tree holds the plan's elements in order;
# - for each sampler, selecting it shows its form with the saved class and settings (read from the live Swing
#   components by tests/gui/probe.groovy, which JMeter runs as its JSR-223 init script);
# - the plan saved from the GUI keeps its elements and settings, and reopens;
# - for each Kafka element (Connection, Producer, Consumer, Lag Monitor), the form shows its title, its groups,
#   each setting's label with its tooltip and the saved value, the passwords in password fields (tests/gui/jmx.py);
#   the Producer's and Consumer's Schema group and the Connection's Verdict group by their labels, with a
#   screenshot of the form scrolled to that group (target/gui-tests/<plan>--<element>--<group>.png);
# - jmeter.log has no ERROR from the GUI's start or from opening a plan, and JMeter exits when asked;
# - screenshots: target/gui-tests/<plan>.png (the whole plan, tree expanded) and
#   target/gui-tests/<plan>--<sampler>.png (that sampler's form). They are not compared with references: look at them.
# Installs Xvfb, xdotool and ImageMagick when missing (scripts/lib/gui.sh, needs the network once). Needs a built jar
# (scripts/build) and no broker. On a shared machine run it in a private network namespace, e.g.
#   unshare -n bash -c 'ip link set lo up && tests/gui/run.sh'
# GUI_PLANS (a list of .jmx, globs allowed) opens only those. Ends with "N passed, N failed". About 1 minute.
set -uo pipefail
# shellcheck source=../lib/checks.sh source-path=SCRIPTDIR
source "$(dirname "${BASH_SOURCE[0]}")/../lib/checks.sh"
enter_work_dir gui-tests
# shellcheck source=../../scripts/lib/common.sh source-path=SCRIPTDIR
source "$root/scripts/lib/common.sh"
# shellcheck source=../../scripts/lib/gui.sh source-path=SCRIPTDIR
source "$root/scripts/lib/gui.sh"
# shellcheck source=../../scripts/lib/jmeter.sh source-path=SCRIPTDIR
source "$root/scripts/lib/jmeter.sh"
# shellcheck source=lib.sh source-path=SCRIPTDIR
source "$root/tests/gui/lib.sh"

cleanup() {
  gui_close
  stop_xvfb
}
trap cleanup EXIT

# A screenshot that shows something: the full window size and more than a handful of colours (a blank or
# half-painted window has a few).
picture_ok() {
  local info w h colours
  info="$(identify -format '%w %h %k' "$1" 2>&1)" || { echo "not an image: $1 ($info)"; return 1; }
  read -r w h colours <<<"$info"
  echo "$1: ${w}x${h}, $colours colours"
  ((w >= 1200 && h >= 800 && colours >= 50))
}

window_title() {
  local title
  title="$(gui_cmd title)" || return 1
  echo "$title"
  [[ "$title" == "$(basename "$plan") ("*") - Apache JMeter ($JMETER_VERSION)" ]]
}

tree_matches_plan() {
  gui_cmd tree >"$plan_dir/tree.txt" || return 1
  diff <(python3 tests/gui/jmx.py tree "$plan") <(cut -d'|' -f1,2 "$plan_dir/tree.txt") ||
    { echo "the GUI's tree (left: the .jmx, right: the GUI) differs"; return 1; }
  cat "$plan_dir/tree.txt"
}

plan_screenshot() {
  gui_cmd expand >/dev/null && gui_cmd select "$(head -n1 "$plan_dir/tree.txt" | cut -d'|' -f2)" >/dev/null || return 1
  gui_screenshot "$out/$plan_name.png" && picture_ok "$out/$plan_name.png"
}

# sampler_form NAME: select it, read its form, compare with the .jmx, screenshot it.
sampler_form() {
  local sampler="$1" file
  file="$out/$plan_name--$(tr -c 'A-Za-z0-9._-' '_' <<<"$sampler" | sed 's/_$//')"
  gui_cmd select "$sampler" >/dev/null && gui_cmd form >"$file.form.txt" || return 1
  python3 tests/gui/jmx.py form-check "$plan" "$sampler" "$file.form.txt" || return 1
  gui_screenshot "$file.png" && picture_ok "$file.png"
}

# group_shown FORM GROUP LABEL...: the form the probe read (sampler_form's FORM.form.txt) has the group titled GROUP
# and each LABEL in it (the Schema group of issue 14, the Connection's Verdict group of issue 12), then a screenshot
# of the form scrolled to that group (FORM--GROUP.png; the element must still be selected).
group_shown() {
  local form="$1" group="$2" label
  shift 2
  grep -qx "border|$group" "$form.form.txt" || { echo "no group '$group' in $form.form.txt"; return 1; }
  for label in "$@"; do
    grep -qx "label|$label:" "$form.form.txt" || { echo "no label '$label:' in $form.form.txt"; return 1; }
    grep -q "^tooltip|$label:|<html>..*</html>$" "$form.form.txt" || { echo "'$label:' has no tooltip"; return 1; }
  done
  echo "$group: $*"
  gui_cmd reveal "$1:" >/dev/null && gui_screenshot "$form--$group.png" && picture_ok "$form--$group.png"
}

# kafka_groups KIND NAME: for a Kafka element of the plan, its new groups by name (after its form was read).
kafka_groups() {
  local kind="$1" sampler="$2" form
  form="$out/$plan_name--$(tr -c 'A-Za-z0-9._-' '_' <<<"$sampler" | sed 's/_$//')"
  gui_cmd select "$sampler" >/dev/null || return 1
  case "$kind" in
    KafkaProducer)
      group_shown "$form" Schema "Value schema file" "Value Protobuf message" "Value schema subject" \
        "Value schema version" "Value field rules" "Value field rules file" "Value schema input" \
        "Value subject naming" "Value framing" "Key schema file" "Registry URL" "Registry username" \
        "Registry password" "Registry CA file" "Auto-register schemas" &&
        grep -qx 'password|(not read)' "$form.form.txt" ;;
    KafkaConsumer)
      group_shown "$form" Schema "Decode values" "Value schema file" "Value assertion" "Decode keys" "Registry URL" \
        "Registry password" && grep -qx 'password|(not read)' "$form.form.txt" ;;
    KafkaConnection)
      group_shown "$form" Verdict "Verdict criteria" "Verdict JUnit file" "Verdict baseline" ;;
    *) echo "no new group to check on a $kind" ;;
  esac
}

# File > Save As through the probe: the saved plan keeps the elements and every sampler's class and settings.
saves_plan() {
  gui_cmd save "$plan_dir/saved.jmx" >/dev/null || return 1
  python3 tests/gui/jmx.py same-plan "$plan" "$plan_dir/saved.jmx"
}

# The saved plan opens again (File > Open) with the same tree; the current plan is then the saved one.
reopens_saved() {
  gui_load "$plan_dir/saved.jmx" || return 1
  gui_cmd tree >"$plan_dir/saved-tree.txt" || return 1
  diff <(python3 tests/gui/jmx.py tree "$plan") <(cut -d'|' -f1,2 "$plan_dir/saved-tree.txt") ||
    { echo "the reopened plan's tree (right) differs from the plan's (left)"; return 1; }
}

# in_add_menu CATEGORY ENTRY...: the GUI's Add > CATEGORY submenu lists every ENTRY (the elements are found).
in_add_menu() {
  local category="$1" entry menu
  shift
  menu="$(gui_cmd menu "$category")" || return 1
  for entry in "$@"; do
    grep -qx "$entry" <<<"$menu" || { echo "Add > $category lacks '$entry'"; return 1; }
  done
  echo "Add > $category lists: $*"
}

# no_log_errors FROM-LINE: no ERROR in jmeter.log from that line on, which shows the plan being loaded.
no_log_errors() {
  local errors
  errors="$(gui_log_errors "$1")"
  [[ -z "$errors" ]] || { printf '%s\n' "$errors" | head -n 10; return 1; }
  tail -n +"$1" "$GUI_DIR/jmeter.log" | grep -q "Loading file: .*$(basename "$plan")" ||
    { echo "jmeter.log does not show $plan being loaded"; return 1; }
}

closes() {
  local pid="$GUI_PID"
  gui_close
  ! kill -0 "$pid" 2>/dev/null || { echo "JMeter still runs"; return 1; }
}

no_crash() {
  local f
  f="$(find "$out" "$root/jmeter-plans" -name 'hs_err_pid*.log' | head -n1)"
  [[ -z "$f" ]] || { echo "a JVM crashed: $f"; return 1; }
}

ensure_gui_tools
ensure_jmeter
install_sampler_jar
start_xvfb "$out"
echo "Xvfb on $DISPLAY"
# GUI_PLANS: the plans to open (default every shipped plan), e.g. GUI_PLANS=jmeter-plans/end-to-end.jmx
# shellcheck disable=SC2086 # word splitting and globbing of GUI_PLANS are wanted
mapfile -t plans < <(readlink -f ${GUI_PLANS:-$root/jmeter-plans/*.jmx})
started=0
for plan in "${plans[@]}"; do
  plan_name="$(basename "$plan" .jmx)"
  plan_dir="$out/$plan_name"
  mkdir -p "$plan_dir"
  # (check's own status is always 0: the outcome decides whether the plan's checks can run)
  if ((started == 0)); then
    log_from=1
    opened=0
    gui_open "$out/gui" "$plan" && opened=1
    check "$plan_name: the GUI starts with it (-t)" test "$opened" = 1
    ((opened)) || break
    started=1
    check "Add > Sampler lists Kafka Producer, Kafka Consumer, Kafka Lag Monitor" \
      in_add_menu samplers "Kafka Producer" "Kafka Consumer" "Kafka Lag Monitor"
    check "Add > Config Element lists Kafka Connection" in_add_menu config_elements 'Kafka Connection'
  else
    log_from="$(($(gui_log_lines) + 1))"
    opened=0
    gui_load "$plan" && opened=1
    check "$plan_name: opened with File > Open" test "$opened" = 1
    ((opened)) || continue
  fi
  check "$plan_name: window title names the plan" window_title
  check "$plan_name: the tree holds the plan's elements in order" tree_matches_plan
  check "$plan_name: screenshot of the whole plan ($plan_name.png)" plan_screenshot
  while IFS= read -r sampler; do
    check "$plan_name: '$sampler' form shows its class and saved settings (screenshot)" sampler_form "$sampler"
  done < <(python3 tests/gui/jmx.py samplers "$plan")
  while IFS='|' read -r kind sampler; do
    [[ "$kind" == KafkaLagMonitor ]] && continue
    group=Schema
    [[ "$kind" == KafkaConnection ]] && group=Verdict
    check "$plan_name: '$sampler' ($kind) shows its $group group's labels (screenshot)" kafka_groups "$kind" "$sampler"
  done < <(python3 tests/gui/jmx.py kafka-elements "$plan")
  check "$plan_name: the GUI saves the plan with its elements and settings" saves_plan
  check "$plan_name: the saved plan reopens with the same elements" reopens_saved
  check "$plan_name: no ERROR in jmeter.log since it was opened" no_log_errors "$log_from"
done
if ((started)); then check "JMeter exits when asked" closes; fi
stop_xvfb
check "no JVM crash (no hs_err_pid*.log)" no_crash
summary
