#!/usr/bin/env python3
"""What a saved plan (.jmx) says the GUI must show, for the GUI tests.

Usage: jmx.py tree PLAN       one line per element, depth first: "depth|name" (the Test Plan has depth 1), the
                              order of JMeter's tree
       jmx.py samplers PLAN   the names of its Java Request samplers and Kafka elements, one a line
       jmx.py kafka-elements PLAN
                              its Kafka elements as "class|name" (e.g. KafkaProducer|kafka-produce), one a line
       jmx.py form-check PLAN NAME FORM
                              the form the GUI probe read for the element NAME (FORM: its "form" answer) shows
                              what the plan saved: for a Java Request its class in the class dropdown and each
                              parameter with its value; for a Kafka element (a TestBean) its title, each group, each
                              setting's label with its tooltip (from the element's Resources.properties) and value
       jmx.py same-plan PLAN SAVED
                              SAVED (the plan as the GUI saved it) has PLAN's elements in the same order and keeps
                              each Java Request's class and parameter values and each Kafka element's settings;
                              prints the parameters the GUI added
"""
import os
import sys
import xml.etree.ElementTree as ET

KAFKA_ELEMENTS = {"io.kafkanative.jmeter." + n for n in ("KafkaConnection", "KafkaProducer", "KafkaConsumer", "KafkaLagMonitor")}
# the form's groups (ElementSetting's group names), each titled by "<group>.displayName" in the Resources
GROUPS = {"topic", "message", "schema", "delivery", "timing", "checks", "client", "cluster", "security", "oauth", "tls",
          "verdict"}
RESOURCES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../java-sampler/src/main/resources")


def resources(cls):
    """The element's Resources.properties as a dict (display names and tooltips)."""
    path = os.path.join(RESOURCES, cls.replace(".", "/") + "Resources.properties")
    out = {}
    for line in open(path, encoding="utf-8"):
        if "=" in line and not line.startswith("#"):
            k, v = line.rstrip("\n").split("=", 1)
            out[k] = v
    return out


def settings(e):
    """{property: value} of a Kafka element's saved settings."""
    return {p.get("name"): p.text or "" for p in e.findall("stringProp")}


def bean_form_check(e, form_file):
    """Problems between a Kafka element's saved settings and the probe's reading of its form."""
    lines = open(form_file, encoding="utf-8").read().splitlines()
    texts = dict(resources(e.tag))
    problems = []
    if not lines or lines[0] != "label|" + texts["displayName"]:
        problems.append(f"the form's title is {lines[0] if lines else 'missing'!r}, not {texts['displayName']!r}")
    borders = {l[len("border|"):] for l in lines if l.startswith("border|")}
    labels = {l[len("label|"):] for l in lines if l.startswith("label|")}
    tooltips = {l for l in lines if l.startswith("tooltip|")}
    values = [l.split("|")[1] for l in lines if l.split("|")[0] in ("field", "textarea", "combo")]
    passwords = sum(1 for l in lines if l.startswith("password|"))
    for key, text in texts.items():
        if key.endswith(".displayName") and key.count(".") == 1 and key.split(".")[0] in GROUPS:
            if text not in borders:
                problems.append(f"no group titled {text!r} (borders: {sorted(borders)})")
    # every setting the element has (saved in the plan or not: a plan from before a setting existed shows it too)
    for key in texts:
        if key.endswith(".shortDescription") and texts[key[: -len(".shortDescription")] + ".displayName"] + ":" not in labels:
            problems.append(f"no label for the setting {key[: -len('.shortDescription')]}")
    secret = [n for n in texts if n.endswith(".shortDescription") and n.split(".")[0].lower().endswith(("password", "secret"))]
    if passwords != len(secret):
        problems.append(f"{passwords} password field(s), the element has {len(secret)} password setting(s)")
    for name, value in settings(e).items():
        label = texts.get(name + ".displayName")
        if label is None:
            problems.append(f"{name} has no display name in the Resources")
            continue
        label += ":"  # as TestBeanGUI shows it
        if label not in labels:
            problems.append(f"no label {label!r} for {name}")
        if f"tooltip|{label}|<html>{texts.get(name + '.shortDescription')}</html>" not in tooltips:
            problems.append(f"the label {label!r} lacks its tooltip")
        if name.lower().endswith("password"):
            pass  # a password field (counted above), never read
        elif value not in values and not (value in ("true", "false") and value.capitalize() in values):
            # (JMeter 5.6.3 shows a literal true/false of a dropdown as True/False; the sampler accepts both)
            problems.append(f"{name}: the value {value!r} is not shown")
        else:
            values.remove(value if value in values else value.capitalize())
    return problems


def elements(hash_tree, depth):
    """(depth, element) pairs of a <hashTree>: its children alternate element, then that element's hashTree."""
    children = list(hash_tree)
    for i, child in enumerate(children):
        if child.tag == "hashTree":
            continue
        yield depth, child
        if i + 1 < len(children) and children[i + 1].tag == "hashTree":
            yield from elements(children[i + 1], depth + 1)


def form_check(sampler, form_file):
    """Compares a Java Request's saved settings with the probe's reading of its form; returns the problems."""
    lines = open(form_file, encoding="utf-8").read().splitlines()
    problems = []
    if not lines or lines[0] != "label|Java Request":
        problems.append(f"the form's title is {lines[0] if lines else 'missing'!r}, not 'label|Java Request'")
    classname = sampler.findtext("stringProp[@name='classname']", "")
    combos = [l.split("|") for l in lines if l.startswith("combo|")]
    if not any(c[1] == classname for c in combos):
        problems.append(f"no class dropdown showing {classname}: {combos}")
    elif not any(classname in c[2].split(";") for c in combos):
        problems.append(f"{classname} is not among the dropdown's choices")
    rows = {l[len("table-row|"):] for l in lines if l.startswith("table-row|")}
    for a in sampler.iterfind("elementProp[@name='arguments']/collectionProp/elementProp"):
        name = a.findtext("stringProp[@name='Argument.name']", "")
        value = a.findtext("stringProp[@name='Argument.value']", "") or ""
        if f"{name};{value}" not in rows:
            problems.append(f"parameter {name} with value {value!r} is not in the form's table")
    return problems


def java_requests(plan):
    """{name: (classname, {parameter: value})} of a plan's Java Request samplers."""
    out = {}
    for _, e in elements(ET.parse(plan).getroot().find("hashTree"), 1):
        if e.tag == "JavaSampler":
            args = {a.findtext("stringProp[@name='Argument.name']", ""): a.findtext("stringProp[@name='Argument.value']", "") or ""
                    for a in e.iterfind("elementProp[@name='arguments']/collectionProp/elementProp")}
            out[e.get("testname", "")] = (e.findtext("stringProp[@name='classname']", ""), args)
    return out


def same_plan(plan, saved):
    """Problems between a plan and the GUI's save of it (empty when the save kept everything)."""
    tree = lambda p: [(d, e.get("testname", ""), e.tag) for d, e in elements(ET.parse(p).getroot().find("hashTree"), 1)]
    problems = []
    if tree(plan) != tree(saved):
        problems.append(f"elements differ: {tree(plan)} != {tree(saved)}")
    kafka = lambda p: {e.get("testname", ""): (e.tag, settings(e)) for _, e in elements(ET.parse(p).getroot().find("hashTree"), 1) if e.tag in KAFKA_ELEMENTS}
    for name, (tag, props) in kafka(plan).items():
        saved_tag, saved_props = kafka(saved).get(name, (None, {}))
        if saved_tag != tag:
            problems.append(f"{name}: saved as {saved_tag}, was {tag}")
        for key, value in props.items():
            if saved_props.get(key, "") != value and not (value in ("true", "false") and saved_props.get(key) == value.capitalize()):
                problems.append(f"{name}: {key} = {saved_props.get(key)!r}, was {value!r}")
    before, after = java_requests(plan), java_requests(saved)
    for name, (classname, args) in before.items():
        if name not in after:
            problems.append(f"{name} is missing from the saved plan")
            continue
        saved_class, saved_args = after[name]
        if saved_class != classname:
            problems.append(f"{name}: class {saved_class} != {classname}")
        for key, value in args.items():
            if saved_args.get(key) != value:
                problems.append(f"{name}: {key} = {saved_args.get(key)!r}, was {value!r}")
        added = sorted(set(saved_args) - set(args))
        if added:
            print(f"{name}: the GUI added {len(added)} parameter(s) of its class: {', '.join(added)}")
    return problems


def main():
    if sys.argv[1] == "same-plan":
        problems = same_plan(sys.argv[2], sys.argv[3])
        for p in problems:
            print(p)
        sys.exit(1 if problems else 0)
    what, plan = sys.argv[1], sys.argv[2]
    root = ET.parse(plan).getroot()
    top = root.find("hashTree")
    found = False
    for depth, e in elements(top, 1):
        if what == "tree":
            print(f"{depth}|{e.get('testname', '')}")
        elif what == "samplers" and (e.tag == "JavaSampler" or e.tag in KAFKA_ELEMENTS):
            print(e.get("testname", ""))
        elif what == "kafka-elements" and e.tag in KAFKA_ELEMENTS:
            print(f"{e.tag.rsplit('.', 1)[1]}|{e.get('testname', '')}")
        elif what == "form-check" and (e.tag == "JavaSampler" or e.tag in KAFKA_ELEMENTS) and e.get("testname") == sys.argv[3]:
            found = True
            problems = form_check(e, sys.argv[4]) if e.tag == "JavaSampler" else bean_form_check(e, sys.argv[4])
            for p in problems:
                print(p)
            if problems:
                sys.exit(1)
            print(f"{sys.argv[3]}: every saved setting shown")
    if what == "form-check" and not found:
        print(f"no Java Request or Kafka element named {sys.argv[3]} in {plan}")
        sys.exit(1)


if __name__ == "__main__":
    main()
