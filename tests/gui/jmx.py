#!/usr/bin/env python3
"""What a saved plan (.jmx) says the GUI must show, for the GUI tests.

Usage: jmx.py tree PLAN       one line per element, depth first: "depth|name" (the Test Plan has depth 1), the
                              order of JMeter's tree
       jmx.py samplers PLAN   the names of its Java Request samplers, one a line
       jmx.py form-check PLAN NAME FORM
                              the form the GUI probe read for the Java Request NAME (FORM: its "form" answer)
                              shows the plan's class in the class dropdown and each saved parameter with its value
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


def main():
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
