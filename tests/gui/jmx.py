#!/usr/bin/env python3
"""What a saved plan (.jmx) says the GUI must show, for the GUI tests.

Usage: jmx.py tree PLAN       one line per element, depth first: "depth|name" (the Test Plan has depth 1), the
                              order of JMeter's tree
       jmx.py samplers PLAN   the names of its Java Request samplers, one a line
       jmx.py form-check PLAN NAME FORM
                              the form the GUI probe read for the Java Request NAME (FORM: its "form" answer)
                              shows the plan's class in the class dropdown and each saved parameter with its value
       jmx.py same-plan PLAN SAVED
                              SAVED (the plan as the GUI saved it) has PLAN's elements in the same order and keeps
                              each Java Request's class and parameter values; prints the parameters the GUI added
"""
import sys
import xml.etree.ElementTree as ET


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
        elif what == "samplers" and e.tag == "JavaSampler":
            print(e.get("testname", ""))
        elif what == "form-check" and e.tag == "JavaSampler" and e.get("testname") == sys.argv[3]:
            found = True
            problems = form_check(e, sys.argv[4])
            for p in problems:
                print(p)
            if problems:
                sys.exit(1)
            print(f"{sys.argv[3]}: class and every saved parameter shown")
    if what == "form-check" and not found:
        print(f"no Java Request named {sys.argv[3]} in {plan}")
        sys.exit(1)


if __name__ == "__main__":
    main()
