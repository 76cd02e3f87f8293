"""A small XML Schema checker (stdlib only) for the subset of XSD the test fixtures use: global elements whose
type is a complexType (a sequence of element refs and choices, with minOccurs/maxOccurs; attributes with a
type and `use`; `mixed` text), a named complexType, or xs:string text. Undeclared attributes and elements, a
missing required attribute, a value of the wrong type and a child out of order or beyond its occurrences
are errors, as an XSD validator reports them."""

from __future__ import annotations

import re
from pathlib import Path
from xml.etree import ElementTree as ET

XS = "{http://www.w3.org/2001/XMLSchema}"
TYPES = {"xs:string": r"(?s).*", "xs:nonNegativeInteger": r"\+?\d+", "xs:decimal": r"[+-]?(\d+(\.\d*)?|\.\d+)"}


def _occurs(node: ET.Element) -> tuple[int, float]:
    high = node.get("maxOccurs", "1")
    return int(node.get("minOccurs", "1")), float("inf") if high == "unbounded" else int(high)


class Schema:
    def __init__(self, path: str | Path) -> None:
        root = ET.parse(path).getroot()
        self.types = {t.get("name"): t for t in root.findall(f"{XS}complexType")}
        self.elements = {e.get("name"): e for e in root.findall(f"{XS}element")}

    def _complex(self, decl: ET.Element) -> ET.Element | None:
        inline = decl.find(f"{XS}complexType")
        return inline if inline is not None else self.types.get(decl.get("type"))

    def validate(self, element: ET.Element) -> list[str]:
        """Every error in `element` and below it (an empty list: valid)."""
        decl = self.elements.get(element.tag)
        if decl is None:
            return [f"<{element.tag}>: not declared"]
        complex_ = self._complex(decl)
        if complex_ is None:  # a simple type: text only
            return [f"<{element.tag}>: no child element or attribute allowed"] if len(element) or element.attrib else []
        errors = self._attributes(element, complex_)
        if complex_.get("mixed") != "true" and (element.text or "").strip():
            errors.append(f"<{element.tag}>: text is not allowed")
        model = complex_.find(f"{XS}sequence")
        children = list(element)
        if model is None:
            errors += [f"<{element.tag}>: no child element allowed, found <{c.tag}>" for c in children]
        else:
            rest = self._sequence(model, children, element.tag, errors)
            errors += [f"<{element.tag}>: unexpected <{c.tag}>" for c in rest]
        for child in children:
            errors += self.validate(child)
        return errors

    def _attributes(self, element: ET.Element, complex_: ET.Element) -> list[str]:
        declared = {a.get("name"): a for a in complex_.findall(f"{XS}attribute")}
        errors = [f"<{element.tag}>: attribute {n!r} not declared" for n in element.attrib if n not in declared]
        for name, a in declared.items():
            value = element.get(name)
            if value is None:
                if a.get("use") == "required":
                    errors.append(f"<{element.tag}>: attribute {name!r} is required")
            elif not re.fullmatch(TYPES[a.get("type", "xs:string")], value):
                errors.append(f"<{element.tag}>: attribute {name}={value!r} is not {a.get('type')}")
        return errors

    def _sequence(self, model: ET.Element, children: list[ET.Element], tag: str, errors: list[str]) -> list[ET.Element]:
        """Consume `children` by the sequence's particles in order; what is left over."""
        for particle in model:
            low, high = _occurs(particle)
            if particle.tag == f"{XS}element":
                allowed = {particle.get("ref")}
            else:  # xs:choice of element refs
                allowed = {e.get("ref") for e in particle.findall(f"{XS}element")}
            n = 0
            while children and children[0].tag in allowed and n < high:
                children, n = children[1:], n + 1
            if n < low:
                errors.append(f"<{tag}>: expected at least {low} of {sorted(allowed)}, found {n}")
        return children
