"""Service addresses the API server allocates on create, as a real one does: cluster IPs from 10.96.0.0/12
(10.96.0.1 is the `kubernetes` Service) and node ports from 30000-32767; released when the Service goes."""

import ipaddress


class ServiceAddresses:
    def __init__(self):
        self._cluster_ips, self._next_ip = set(), int(ipaddress.ip_address("10.96.0.11"))
        self._node_ports = set()

    def allocate(self, obj: dict, old: dict | None) -> None:
        """Fill spec.clusterIP(s) and nodePorts; on update keep what was allocated before (clients may omit it)."""
        spec = obj["spec"]
        old_spec = (old or {}).get("spec") or {}
        if spec.get("type") == "ExternalName":
            return
        if not spec.get("clusterIP"):
            spec["clusterIP"] = old_spec.get("clusterIP") or self._next_cluster_ip()
        elif spec["clusterIP"] != "None" and not old:
            self._cluster_ips.add(spec["clusterIP"])
        spec["clusterIPs"] = [spec["clusterIP"]]
        if spec.get("type") in ("NodePort", "LoadBalancer"):
            old_ports = {p.get("port"): p.get("nodePort") for p in old_spec.get("ports") or []}
            for port in spec.get("ports") or []:
                if not port.get("nodePort"):
                    port["nodePort"] = old_ports.get(port.get("port")) or self._next_node_port()
                else:
                    self._node_ports.add(port["nodePort"])

    def _next_cluster_ip(self) -> str:
        while str(ipaddress.ip_address(self._next_ip)) in self._cluster_ips:
            self._next_ip += 1
        ip = str(ipaddress.ip_address(self._next_ip))
        self._cluster_ips.add(ip)
        self._next_ip += 1
        return ip

    def _next_node_port(self) -> int:
        free = next(p for p in range(30000, 32768) if p not in self._node_ports)
        self._node_ports.add(free)
        return free

    def on_change(self, key, type_, obj, old) -> None:
        if key == "services" and type_ == "DELETED":
            self._cluster_ips.discard(obj["spec"].get("clusterIP"))
            for port in obj["spec"].get("ports") or []:
                self._node_ports.discard(port.get("nodePort"))
