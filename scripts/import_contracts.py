"""An import-linter contract type the library lacks: no circle between modules (`acyclic_modules`).

import-linter's own `acyclic_siblings` looks at packages as wholes (a package imports its sibling if any of its
modules does); this one looks at modules, the unit a reader follows: no module may import, directly or through
others, a module that imports it back. Registered in .importlinter (`contract_types`)."""

import grimp
from importlinter.application import output
from importlinter.domain import fields
from importlinter.domain.contract import Contract, ContractCheck


class AcyclicModulesContract(Contract):
    type_name = "acyclic_modules"

    containers = fields.ListField(subfield=fields.StringField())

    def check(self, graph: grimp.ImportGraph, verbose: bool) -> ContractCheck:
        roots = tuple(self.containers)  # type: ignore[arg-type]
        modules = sorted(m for m in graph.modules if m in roots or m.startswith(tuple(r + "." for r in roots)))
        circles = [c for c in _strongly_connected(graph, set(modules)) if len(c) > 1]
        chains = []
        for circle in circles:
            first = circle[0]
            back = next(m for m in circle[1:] if graph.find_shortest_chain(m, first)
                        and graph.find_shortest_chain(first, m))
            chains.append(list(graph.find_shortest_chain(first, back)) + list(graph.find_shortest_chain(back, first))[1:])
        return ContractCheck(kept=not circles, metadata={"circles": chains})

    def render_broken_contract(self, check: ContractCheck) -> None:
        for chain in check.metadata["circles"]:
            output.print_error(" -> ".join(chain))
            output.new_line()


def _strongly_connected(graph: grimp.ImportGraph, modules: set[str]) -> list[list[str]]:
    """Tarjan's algorithm, iterative, over the direct imports between `modules`."""
    index, low, stack, on_stack, found, counter = {}, {}, [], set(), [], 0
    for start in sorted(modules):
        if start in index:
            continue
        work = [(start, iter(sorted(graph.find_modules_directly_imported_by(start) & modules)))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            for succ in successors:
                if succ not in index:
                    index[succ] = low[succ] = counter
                    counter += 1
                    stack.append(succ)
                    on_stack.add(succ)
                    work.append((succ, iter(sorted(graph.find_modules_directly_imported_by(succ) & modules))))
                    break
                if succ in on_stack:
                    low[node] = min(low[node], index[succ])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    found.append(sorted(component))
    return found
