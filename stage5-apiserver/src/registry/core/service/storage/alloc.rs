//! The addresses and ports a service gets when it is created: mirrors
//! kubernetes' `pkg/registry/core/service/storage/alloc.go` (`initIPFamilyFields`,
//! `allocClusterIPs`, `txnAllocNodePorts`, `allocHealthCheckNodePort`), which the
//! service REST storage runs from its `BeginCreate` hook, with
//! `pkg/registry/core/service/ipallocator` and `portallocator`.
//!
//! The cluster is single-stack IPv4 with kube-apiserver's default ranges: the
//! service CIDR `10.96.0.0/12` (its first address is the `kubernetes`
//! service's, so never handed out here) and the node-port range
//! `30000-32767`. Like upstream's allocators, a free value is drawn at random
//! and one the client asked for must be free.
//!
//! Upstream keeps what is allocated in etcd (a bitmap, or since 1.33 an
//! `IPAddress` object per address), so two creates can never draw the same
//! value. Here the allocator reads the services stored when the create
//! begins: two creates at the same instant could draw one address, a
//! one-in-a-million chance for a cluster IP.

use std::collections::HashSet;
use std::net::Ipv4Addr;

use apimachinery::apis::meta::v1::ListOptions;
use apimachinery::util::validation::field::FieldError;
use rand::RngExt as _;
use serde_json::{Value, json};
use stage5_storage::{Object, SelectionPredicate, Storage};

use crate::status::ApiError;

/// The service CIDR's network address (`--service-cluster-ip-range`'s
/// default, `10.96.0.0/12`).
pub const SERVICE_CIDR: (Ipv4Addr, u8) = (Ipv4Addr::new(10, 96, 0, 0), 12);
/// The node-port range (`--service-node-port-range`'s default).
pub const NODE_PORTS: std::ops::RangeInclusive<i64> = 30000..=32767;

/// Whether `ip` is in the service CIDR, not its network, broadcast or first
/// (the `kubernetes` service's) address.
fn allocatable(ip: Ipv4Addr) -> bool {
    let (network, bits) = SERVICE_CIDR;
    let size = 1u32 << (32 - bits);
    let offset = u32::from(ip).wrapping_sub(u32::from(network));
    (2..size - 1).contains(&offset)
}

/// What the stored services hold: their cluster IPs and node ports.
#[derive(Debug, Default)]
pub struct Allocated {
    ips: HashSet<String>,
    ports: HashSet<i64>,
}

impl Allocated {
    /// What `services` hold.
    pub fn of<'a>(services: impl IntoIterator<Item = &'a Value>) -> Allocated {
        let mut allocated = Allocated::default();
        for spec in services.into_iter().map(|s| &s["spec"]) {
            allocated.ips.extend(
                crate::apis::items(&spec["clusterIPs"])
                    .iter()
                    .filter_map(|ip| ip.as_str().map(str::to_string)),
            );
            if let Some(ip) = spec["clusterIP"].as_str() {
                allocated.ips.insert(ip.to_string());
            }
            for port in crate::apis::items(&spec["ports"]) {
                allocated.ports.extend(port["nodePort"].as_i64());
            }
            allocated.ports.extend(spec["healthCheckNodePort"].as_i64());
        }
        allocated
    }

    /// A free cluster IP, drawn at random.
    fn draw_ip(&mut self) -> Option<String> {
        let (network, bits) = SERVICE_CIDR;
        let size = 1u32 << (32 - bits);
        let mut rng = rand::rng();
        for _ in 0..1024 {
            let ip =
                Ipv4Addr::from(u32::from(network) + rng.random_range(2..size - 1));
            if self.ips.insert(ip.to_string()) {
                return Some(ip.to_string());
            }
        }
        None
    }

    /// A free node port, drawn at random.
    fn draw_port(&mut self) -> Option<i64> {
        let mut rng = rand::rng();
        for _ in 0..1024 {
            let port = rng.random_range(NODE_PORTS);
            if self.ports.insert(port) {
                return Some(port);
            }
        }
        NODE_PORTS.clone().find(|port| self.ports.insert(*port))
    }

    /// Mirrors `allocClusterIPs` and `txnAllocNodePorts` for a new
    /// `service` (its stored JSON): fills `clusterIP`, `clusterIPs`, the IP
    /// family fields, each port's `nodePort` and the health check port where
    /// its type needs them; a value the client chose must be free.
    pub fn allocate(&mut self, service: &mut Value) -> Result<(), Vec<FieldError>> {
        let spec = &mut service["spec"];
        let kind = spec["type"].as_str().unwrap_or("ClusterIP").to_string();
        if kind == "ExternalName" {
            return Ok(());
        }
        let mut errors = Vec::new();
        let asked = spec["clusterIP"].as_str().unwrap_or_default().to_string();
        let ip = match asked.as_str() {
            "" => self.draw_ip(),
            "None" => Some("None".to_string()),
            asked => match asked.parse::<Ipv4Addr>() {
                Ok(ip) if !allocatable(ip) => {
                    errors.push(FieldError::invalid(
                        "spec.clusterIPs",
                        asked,
                        format!(
                            "failed to allocate IP {asked}: the provided IP ({asked}) is not in the valid range. The range of valid IPs is 10.96.0.0/12"
                        ),
                    ));
                    None
                }
                Ok(_) if !self.ips.insert(asked.to_string()) => {
                    errors.push(FieldError::invalid(
                        "spec.clusterIPs",
                        asked,
                        format!("failed to allocate IP {asked}: provided IP is already allocated"),
                    ));
                    None
                }
                Ok(_) => Some(asked.to_string()),
                Err(_) => {
                    errors.push(FieldError::invalid(
                        "spec.clusterIPs[0]",
                        asked,
                        "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
                    ));
                    None
                }
            },
        };
        if let Some(ip) = ip {
            spec["clusterIP"] = json!(ip);
            spec["clusterIPs"] = json!([ip]);
        }
        // `initIPFamilyFields`: one IPv4 family; a headless service without a
        // selector would take any, which on this single-stack cluster is the
        // same one.
        if spec["ipFamilyPolicy"].is_null() {
            spec["ipFamilyPolicy"] = json!("SingleStack");
        }
        if spec["ipFamilies"].is_null() {
            spec["ipFamilies"] = json!(["IPv4"]);
        }
        let node_ports = matches!(kind.as_str(), "NodePort" | "LoadBalancer")
            && spec["allocateLoadBalancerNodePorts"].as_bool() != Some(false);
        if node_ports && let Some(ports) = spec["ports"].as_array_mut() {
            for (i, port) in ports.iter_mut().enumerate() {
                match port["nodePort"].as_i64().unwrap_or(0) {
                    0 => match self.draw_port() {
                        Some(drawn) => port["nodePort"] = json!(drawn),
                        None => errors.push(FieldError::invalid_number(
                            &format!("spec.ports[{i}].nodePort"),
                            0,
                            "failed to allocate a nodePort: range is full",
                        )),
                    },
                    asked if !NODE_PORTS.contains(&asked) => {
                        errors.push(FieldError::invalid_number(
                            &format!("spec.ports[{i}].nodePort"),
                            asked,
                            "provided port is not in the valid range. The range of valid ports is 30000-32767",
                        ))
                    }
                    asked if !self.ports.insert(asked) => errors.push(
                        FieldError::invalid_number(
                            &format!("spec.ports[{i}].nodePort"),
                            asked,
                            "provided port is already allocated",
                        ),
                    ),
                    _ => {}
                }
            }
        }
        let local = spec["externalTrafficPolicy"].as_str() == Some("Local");
        if kind == "LoadBalancer"
            && local
            && spec["healthCheckNodePort"].as_i64().unwrap_or(0) == 0
        {
            spec["healthCheckNodePort"] = json!(self.draw_port());
        }
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors)
        }
    }
}

/// Mirrors the service storage's `beginCreate`: allocates for `service`
/// against what the services in `storage` hold; 422 for a value that is
/// taken or out of range.
pub async fn alloc_for_create(
    storage: &dyn Storage,
    service: &mut Object,
) -> Result<(), ApiError> {
    let list = storage
        .get_list(
            storage.info().key_prefix(),
            ListOptions::default(),
            SelectionPredicate::default(),
        )
        .await?;
    let mut allocated = Allocated::of(list.items.iter().map(|s| &s.data));
    allocated.allocate(&mut service.data).map_err(|errors| {
        let causes = errors.iter().map(FieldError::to_cause).collect();
        ApiError::invalid_causes("", "Service", service.name(), causes)
    })
}

/// Mirrors `patchAllocatedValues`: a write that leaves out what was
/// allocated (a `PUT` of a manifest without `clusterIP`, say) keeps it, as
/// long as the type still needs it.
pub fn patch_allocated_values(next: &mut Value, current: &Value) {
    let (new_spec, old_spec) = (&mut next["spec"], &current["spec"]);
    let kind = new_spec["type"].as_str().unwrap_or_default().to_string();
    if kind == "ExternalName" || old_spec["type"].as_str() == Some("ExternalName") {
        return;
    }
    for field in ["clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy"] {
        if crate::apis::is_empty(&new_spec[field]) && !old_spec[field].is_null() {
            new_spec[field] = old_spec[field].clone();
        }
    }
    if matches!(kind.as_str(), "NodePort" | "LoadBalancer") {
        let old_ports = crate::apis::items(&old_spec["ports"]).to_vec();
        if let Some(ports) = new_spec["ports"].as_array_mut() {
            for port in ports {
                if port["nodePort"].as_i64().unwrap_or(0) != 0 {
                    continue;
                }
                let same = old_ports.iter().find(|old| {
                    old["port"] == port["port"]
                        && old["protocol"] == port["protocol"]
                });
                if let Some(node_port) =
                    same.and_then(|old| old["nodePort"].as_i64())
                {
                    port["nodePort"] = json!(node_port);
                }
            }
        }
        if new_spec["healthCheckNodePort"].is_null()
            && !old_spec["healthCheckNodePort"].is_null()
        {
            new_spec["healthCheckNodePort"] =
                old_spec["healthCheckNodePort"].clone();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_service_gets_a_free_ip_and_node_ports_in_range() {
        let taken = json!({"spec": {"clusterIP": "10.96.0.10", "ports": [{"nodePort": 30080}]}});
        let mut allocated = Allocated::of([&taken]);
        let mut service = json!({"spec": {"type": "NodePort",
            "ports": [{"port": 80, "protocol": "TCP"}]}});
        allocated.allocate(&mut service).expect("free");
        let ip: Ipv4Addr = service["spec"]["clusterIP"]
            .as_str()
            .unwrap()
            .parse()
            .unwrap();
        assert!(allocatable(ip) && ip != Ipv4Addr::new(10, 96, 0, 10));
        assert_eq!(service["spec"]["clusterIPs"], json!([ip.to_string()]));
        assert_eq!(service["spec"]["ipFamilies"], json!(["IPv4"]));
        let port = service["spec"]["ports"][0]["nodePort"].as_i64().unwrap();
        assert!(NODE_PORTS.contains(&port) && port != 30080);

        let mut clash = json!({"spec": {"type": "NodePort", "clusterIP": "10.96.0.10",
            "ports": [{"port": 80, "nodePort": 30080}]}});
        let errors = allocated.allocate(&mut clash).expect_err("taken");
        assert_eq!(errors[0].field, "spec.clusterIPs");
        assert!(
            errors[0]
                .detail
                .ends_with("provided IP is already allocated")
        );
        assert_eq!(
            errors[1].error_body(),
            "Invalid value: 30080: provided port is already allocated"
        );

        let mut headless =
            json!({"spec": {"type": "ClusterIP", "clusterIP": "None"}});
        allocated.allocate(&mut headless).expect("headless");
        assert_eq!(headless["spec"]["clusterIPs"], json!(["None"]));
        let mut outside =
            json!({"spec": {"type": "ClusterIP", "clusterIP": "10.96.0.1"}});
        assert!(allocated.allocate(&mut outside).is_err());
    }

    #[test]
    fn an_update_without_the_allocated_values_keeps_them() {
        let current = json!({"spec": {"type": "NodePort", "clusterIP": "10.96.3.4",
            "clusterIPs": ["10.96.3.4"], "ports": [{"port": 80, "protocol": "TCP", "nodePort": 31000}]}});
        let mut next = json!({"spec": {"type": "NodePort",
            "ports": [{"port": 80, "protocol": "TCP"}]}});
        patch_allocated_values(&mut next, &current);
        assert_eq!(next["spec"]["clusterIP"], "10.96.3.4");
        assert_eq!(next["spec"]["ports"][0]["nodePort"], 31000);
    }
}
