//! The decoder against bodies kubectl 1.32 sent (`testdata/`, captured from
//! `kubectl create namespace|configmap|secret generic|deployment`), against
//! objects encoded with `k8s-pb` as client-go encodes them, and against bad
//! bytes.

use k8s_pb::api::apps::v1 as apps;
use k8s_pb::api::batch::v1 as batch;
use k8s_pb::api::core::v1 as core;
use k8s_pb::api::discovery::v1 as discovery;
use k8s_pb::api::policy::v1 as policy;
use k8s_pb::apimachinery::pkg::apis::meta::v1 as meta;
use k8s_pb::apimachinery::pkg::util::intstr::IntOrString;
use prost::Message as _;
use serde_json::json;

use super::*;

/// A body as client-go's protobuf serializer writes it: the prefix and a
/// `runtime.Unknown` around the object's bytes.
fn envelope(api_version: &str, kind: &str, object: &impl prost::Message) -> Vec<u8> {
    let unknown = k8s_pb::apimachinery::pkg::runtime::Unknown {
        type_meta: Some(k8s_pb::apimachinery::pkg::runtime::TypeMeta {
            api_version: Some(api_version.into()),
            kind: Some(kind.into()),
        }),
        raw: Some(object.encode_to_vec()),
        content_encoding: Some(String::new()),
        content_type: Some(String::new()),
    };
    let mut body = PREFIX.to_vec();
    body.extend(unknown.encode_to_vec());
    body
}

#[test]
fn kubectl_create_bodies_decode_to_the_json_kubectl_would_have_sent() {
    // Each right-hand side is `kubectl create … --dry-run=client -o json` for
    // the same command.
    let cases = [
        (
            &include_bytes!("testdata/kubectl-create-namespaces.pb")[..],
            ("v1", "Namespace"),
            json!({"apiVersion":"v1","kind":"Namespace",
                "metadata":{"creationTimestamp":null,"name":"workshop"},"spec":{},"status":{}}),
        ),
        (
            &include_bytes!("testdata/kubectl-create-configmaps.pb")[..],
            ("v1", "ConfigMap"),
            json!({"apiVersion":"v1","kind":"ConfigMap","data":{"color":"blue","size":"2"},
                "metadata":{"creationTimestamp":null,"name":"settings"}}),
        ),
        (
            &include_bytes!("testdata/kubectl-create-secrets.pb")[..],
            ("v1", "Secret"),
            json!({"apiVersion":"v1","kind":"Secret","data":{"password":"czNjcjN0"},
                "metadata":{"creationTimestamp":null,"name":"creds"}}),
        ),
        (
            &include_bytes!("testdata/kubectl-create-deployments.pb")[..],
            ("apps/v1", "Deployment"),
            json!({"apiVersion":"apps/v1","kind":"Deployment",
                "metadata":{"creationTimestamp":null,"labels":{"app":"web"},"name":"web"},
                "spec":{"replicas":2,"selector":{"matchLabels":{"app":"web"}},"strategy":{},
                    "template":{"metadata":{"creationTimestamp":null,"labels":{"app":"web"}},
                        "spec":{"containers":[{"image":"nginx:1.27","name":"nginx",
                            "ports":[{"containerPort":80}],"resources":{}}]}}},
                "status":{}}),
        ),
    ];
    for (body, (api_version, kind), expected) in cases {
        assert_eq!(decode(body, api_version, kind).unwrap(), expected, "{kind}");
    }
}

#[test]
fn a_pod_encoded_with_k8s_pb_keeps_every_json_rule() {
    let pod = core::Pod {
        metadata: Some(meta::ObjectMeta {
            name: Some("web-0".into()),
            generate_name: Some(String::new()),
            generation: Some(0),
            creation_timestamp: Some(meta::Time {
                seconds: Some(1_700_000_000),
                nanos: Some(0),
            }),
            owner_references: vec![meta::OwnerReference {
                api_version: Some("apps/v1".into()),
                kind: Some("ReplicaSet".into()),
                name: Some("web".into()),
                uid: Some("u-1".into()),
                controller: Some(false),
                block_owner_deletion: None,
            }],
            ..Default::default()
        }),
        spec: Some(core::PodSpec {
            containers: vec![core::Container {
                name: Some("app".into()),
                image: Some("nginx".into()),
                stdin: Some(false),
                ports: vec![core::ContainerPort {
                    container_port: Some(8080),
                    host_port: Some(0),
                    protocol: Some("TCP".into()),
                    ..Default::default()
                }],
                resources: Some(core::ResourceRequirements {
                    limits: [(
                        "memory".to_string(),
                        k8s_pb::apimachinery::pkg::api::resource::Quantity {
                            string: Some("128Mi".into()),
                        },
                    )]
                    .into(),
                    ..Default::default()
                }),
                liveness_probe: Some(core::Probe {
                    handler: Some(core::ProbeHandler {
                        http_get: Some(core::HttpGetAction {
                            path: Some("/healthz".into()),
                            port: Some(IntOrString {
                                r#type: Some(1),
                                int_val: Some(0),
                                str_val: Some("http".into()),
                            }),
                            ..Default::default()
                        }),
                        ..Default::default()
                    }),
                    period_seconds: Some(10),
                    ..Default::default()
                }),
                ..Default::default()
            }],
            volumes: vec![core::Volume {
                name: Some("config".into()),
                volume_source: Some(core::VolumeSource {
                    config_map: Some(core::ConfigMapVolumeSource {
                        local_object_reference: Some(core::LocalObjectReference {
                            name: Some("settings".into()),
                        }),
                        default_mode: Some(0o644),
                        ..Default::default()
                    }),
                    ..Default::default()
                }),
            }],
            automount_service_account_token: Some(false),
            host_network: Some(false),
            termination_grace_period_seconds: Some(0),
            ..Default::default()
        }),
        status: None,
    };
    let body = envelope("v1", "Pod", &pod);
    assert_eq!(
        decode(&body, "v1", "Pod").unwrap(),
        json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {
                "name": "web-0",
                "creationTimestamp": "2023-11-14T22:13:20Z",
                "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                    "name": "web", "uid": "u-1", "controller": false}],
            },
            "spec": {
                "containers": [{
                    "name": "app", "image": "nginx",
                    "ports": [{"containerPort": 8080, "protocol": "TCP"}],
                    "resources": {"limits": {"memory": "128Mi"}},
                    "livenessProbe": {"httpGet": {"path": "/healthz", "port": "http"},
                        "periodSeconds": 10},
                }],
                "volumes": [{"name": "config",
                    "configMap": {"name": "settings", "defaultMode": 420}}],
                "automountServiceAccountToken": false,
                "terminationGracePeriodSeconds": 0,
            },
        })
    );
}

#[test]
fn a_pointer_zero_stays_and_a_non_pointer_zero_goes() {
    let deployment = apps::Deployment {
        metadata: Some(meta::ObjectMeta {
            name: Some("idle".into()),
            ..Default::default()
        }),
        spec: Some(apps::DeploymentSpec {
            replicas: Some(0),
            min_ready_seconds: Some(0),
            paused: Some(false),
            revision_history_limit: Some(0),
            strategy: Some(apps::DeploymentStrategy {
                r#type: Some("RollingUpdate".into()),
                rolling_update: Some(apps::RollingUpdateDeployment {
                    max_unavailable: Some(IntOrString {
                        r#type: Some(0),
                        int_val: Some(0),
                        str_val: Some(String::new()),
                    }),
                    max_surge: Some(IntOrString {
                        r#type: Some(1),
                        int_val: Some(0),
                        str_val: Some("25%".into()),
                    }),
                }),
            }),
            ..Default::default()
        }),
        status: Some(apps::DeploymentStatus {
            replicas: Some(0),
            ..Default::default()
        }),
    };
    let value =
        decode(&envelope("apps/v1", "Deployment", &deployment), "", "").unwrap();
    assert_eq!(
        value["spec"],
        json!({"replicas": 0, "revisionHistoryLimit": 0,
            "strategy": {"type": "RollingUpdate",
                "rollingUpdate": {"maxUnavailable": 0, "maxSurge": "25%"}}})
    );
    assert_eq!(value["status"], json!({}));
}

#[test]
fn a_service_and_a_job_keep_their_pointer_zeros() {
    let service = core::Service {
        metadata: Some(meta::ObjectMeta {
            name: Some("web".into()),
            ..Default::default()
        }),
        spec: Some(core::ServiceSpec {
            ports: vec![core::ServicePort {
                name: Some(String::new()),
                protocol: Some("TCP".into()),
                port: Some(80),
                target_port: Some(IntOrString {
                    r#type: Some(0),
                    int_val: Some(8080),
                    str_val: Some(String::new()),
                }),
                node_port: Some(0),
                ..Default::default()
            }],
            selector: [("app".to_string(), "web".to_string())].into(),
            cluster_ip: Some(String::new()),
            r#type: Some("ClusterIP".into()),
            publish_not_ready_addresses: Some(false),
            allocate_load_balancer_node_ports: Some(false),
            load_balancer_class: Some(String::new()),
            ..Default::default()
        }),
        status: Some(core::ServiceStatus::default()),
    };
    let value = decode(&envelope("v1", "Service", &service), "", "").unwrap();
    assert_eq!(
        value["spec"],
        json!({"ports": [{"protocol": "TCP", "port": 80, "targetPort": 8080}],
            "selector": {"app": "web"}, "type": "ClusterIP",
            "allocateLoadBalancerNodePorts": false, "loadBalancerClass": ""})
    );

    let job = batch::Job {
        metadata: Some(meta::ObjectMeta {
            name: Some("backup".into()),
            ..Default::default()
        }),
        spec: Some(batch::JobSpec {
            parallelism: Some(1),
            backoff_limit: Some(0),
            suspend: Some(false),
            template: Some(core::PodTemplateSpec {
                spec: Some(core::PodSpec {
                    restart_policy: Some("Never".into()),
                    containers: vec![core::Container {
                        name: Some("backup".into()),
                        ..Default::default()
                    }],
                    ..Default::default()
                }),
                ..Default::default()
            }),
            ..Default::default()
        }),
        status: Some(batch::JobStatus {
            active: Some(0),
            ready: Some(0),
            ..Default::default()
        }),
    };
    let value = decode(&envelope("batch/v1", "Job", &job), "", "").unwrap();
    assert_eq!(
        value,
        json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "backup"},
            "spec": {"parallelism": 1, "backoffLimit": 0, "suspend": false,
                "template": {"spec": {"restartPolicy": "Never",
                    "containers": [{"name": "backup"}]}}},
            "status": {"ready": 0}})
    );
}

#[test]
fn zeros_go_writes_are_kept_and_a_name_shared_by_two_groups_stays_apart() {
    // `disruptionsAllowed` has no `omitempty`: Go writes its zero.
    let budget = policy::PodDisruptionBudget {
        metadata: Some(meta::ObjectMeta {
            name: Some("web".into()),
            ..Default::default()
        }),
        spec: None,
        status: Some(policy::PodDisruptionBudgetStatus {
            observed_generation: Some(0),
            disruptions_allowed: Some(0),
            current_healthy: Some(0),
            desired_healthy: Some(0),
            expected_pods: Some(0),
            ..Default::default()
        }),
    };
    let value = decode(
        &envelope("policy/v1", "PodDisruptionBudget", &budget),
        "",
        "",
    )
    .unwrap();
    assert_eq!(
        value["status"],
        json!({"disruptionsAllowed": 0, "currentHealthy": 0, "desiredHealthy": 0,
            "expectedPods": 0})
    );

    // A `discovery/v1.EndpointPort`'s fields are pointers; a
    // `core/v1.EndpointPort`'s name and protocol are not.
    let slice = discovery::EndpointSlice {
        address_type: Some("IPv4".into()),
        ports: vec![discovery::EndpointPort {
            name: Some(String::new()),
            protocol: Some("TCP".into()),
            port: Some(0),
            ..Default::default()
        }],
        ..Default::default()
    };
    let value = decode(
        &envelope("discovery.k8s.io/v1", "EndpointSlice", &slice),
        "",
        "",
    )
    .unwrap();
    assert_eq!(
        value["ports"],
        json!([{"name": "", "protocol": "TCP", "port": 0}])
    );
    let endpoints = core::Endpoints {
        subsets: vec![core::EndpointSubset {
            ports: vec![core::EndpointPort {
                name: Some(String::new()),
                port: Some(80),
                protocol: Some(String::new()),
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    };
    let value = decode(&envelope("v1", "Endpoints", &endpoints), "", "").unwrap();
    assert_eq!(value["subsets"], json!([{"ports": [{"port": 80}]}]));
}

#[test]
fn a_persistent_volume_s_source_is_inline_and_a_claim_s_empty_class_stays() {
    let volume = core::PersistentVolume {
        metadata: Some(meta::ObjectMeta {
            name: Some("pv-1".into()),
            ..Default::default()
        }),
        spec: Some(core::PersistentVolumeSpec {
            persistent_volume_source: Some(core::PersistentVolumeSource {
                csi: Some(core::CSIPersistentVolumeSource {
                    driver: Some("ebs.csi.aws.com".into()),
                    volume_handle: Some("vol-1".into()),
                    read_only: Some(false),
                    ..Default::default()
                }),
                ..Default::default()
            }),
            storage_class_name: Some(String::new()),
            volume_mode: Some("Filesystem".into()),
            ..Default::default()
        }),
        status: None,
    };
    let value =
        decode(&envelope("v1", "PersistentVolume", &volume), "", "").unwrap();
    assert_eq!(
        value["spec"],
        json!({"csi": {"driver": "ebs.csi.aws.com", "volumeHandle": "vol-1"},
            "volumeMode": "Filesystem"})
    );
    let claim = core::PersistentVolumeClaim {
        spec: Some(core::PersistentVolumeClaimSpec {
            storage_class_name: Some(String::new()),
            ..Default::default()
        }),
        ..Default::default()
    };
    let value =
        decode(&envelope("v1", "PersistentVolumeClaim", &claim), "", "").unwrap();
    assert_eq!(value["spec"], json!({"storageClassName": ""}));
}

#[test]
fn a_csr_s_extra_is_a_map_of_lists() {
    let csr = json!({"apiVersion": "certificates.k8s.io/v1",
        "kind": "CertificateSigningRequest",
        "metadata": {"name": "node-csr-1"},
        "spec": {"request": "Y3Ny", "signerName": "kubernetes.io/kube-apiserver-client-kubelet",
            "usages": ["digital signature", "client auth"], "username": "system:node:n1",
            "extra": {"authentication.kubernetes.io/credential-id": ["X509SHA256=ab"],
                "empty": []}},
        "status": {}});
    let raw = marshal("certificates.k8s.io/v1", "CertificateSigningRequest", &csr)
        .unwrap();
    let read = k8s_pb::api::certificates::v1::CertificateSigningRequest::decode(
        raw.as_slice(),
    )
    .unwrap();
    let extra = read.spec.unwrap().extra;
    assert_eq!(
        extra["authentication.kubernetes.io/credential-id"].items,
        ["X509SHA256=ab"]
    );
    assert!(extra["empty"].items.is_empty());
    assert_eq!(decode(&encode(&csr).unwrap(), "", "").unwrap(), csr);
}

#[test]
fn an_envelope_without_a_type_takes_the_endpoints() {
    let namespace = core::Namespace {
        metadata: Some(meta::ObjectMeta {
            name: Some("bare".into()),
            ..Default::default()
        }),
        ..Default::default()
    };
    let unknown = k8s_pb::apimachinery::pkg::runtime::Unknown {
        raw: Some(namespace.encode_to_vec()),
        ..Default::default()
    };
    let mut body = PREFIX.to_vec();
    body.extend(unknown.encode_to_vec());
    assert_eq!(
        decode(&body, "v1", "Namespace").unwrap(),
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "bare"}})
    );
}

#[test]
fn delete_options_decode_in_any_group_version() {
    let options = meta::DeleteOptions {
        grace_period_seconds: Some(0),
        propagation_policy: Some("Foreground".into()),
        ..Default::default()
    };
    let value =
        decode(&envelope("apps/v1", "DeleteOptions", &options), "", "").unwrap();
    assert_eq!(
        value,
        json!({"apiVersion": "apps/v1", "kind": "DeleteOptions",
            "gracePeriodSeconds": 0, "propagationPolicy": "Foreground"})
    );
}

#[test]
fn special_types_take_their_own_json_forms() {
    assert_eq!(go_duration(0), "0s");
    assert_eq!(go_duration(1_500_000), "1.5ms");
    assert_eq!(go_duration(3_723_500_000_000), "1h2m3.5s");
    assert_eq!(go_duration(-90_000_000_000), "-1m30s");
    assert_eq!(go_duration(2_000), "2µs");
    assert_eq!(
        rfc3339(0, Some(123_456_789)).unwrap(),
        "1970-01-01T00:00:00.123456Z"
    );
    let event = core::Event {
        metadata: Some(meta::ObjectMeta {
            name: Some("e".into()),
            ..Default::default()
        }),
        event_time: Some(meta::MicroTime {
            seconds: Some(1_700_000_000),
            nanos: Some(5_000),
        }),
        count: Some(0),
        ..Default::default()
    };
    let value = decode(&envelope("v1", "Event", &event), "", "").unwrap();
    assert_eq!(value["eventTime"], json!("2023-11-14T22:13:20.000005Z"));
    assert!(value.get("count").is_none());
}

#[test]
fn bad_bodies_are_errors_with_upstreams_messages() {
    assert_eq!(decode(b"", "v1", "Pod"), Err(ProtobufError::EmptyData));
    assert_eq!(
        decode(b"{\"kind\":\"Pod\"}", "v1", "Pod")
            .unwrap_err()
            .to_string(),
        "provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]"
    );
    assert_eq!(decode(&PREFIX, "v1", "Pod"), Err(ProtobufError::EmptyBody));
    let unserved = envelope("v1", "LimitRange", &core::LimitRange::default());
    assert_eq!(
        decode(&unserved, "v1", "LimitRange")
            .unwrap_err()
            .to_string(),
        "no kind \"LimitRange\" is registered for version \"v1\""
    );
    let mut body = PREFIX.to_vec();
    // A runtime.Unknown whose raw is a Pod with `metadata` (field 1) as a varint.
    body.extend([0x12, 0x02, 0x08, 0x01]);
    assert_eq!(
        decode(&body, "v1", "Pod").unwrap_err().to_string(),
        "proto: wrong wireType = 0 for field metadata of Pod"
    );
    // A name that is not UTF-8.
    let mut body = PREFIX.to_vec();
    body.extend([0x12, 0x05, 0x0a, 0x03, 0x0a, 0x01, 0xff]);
    assert!(matches!(
        decode(&body, "v1", "Pod"),
        Err(ProtobufError::Wire(_))
    ));
}

#[test]
fn every_truncation_and_every_flipped_byte_of_a_real_body_decodes_or_fails_cleanly()
{
    let body = include_bytes!("testdata/kubectl-create-deployments.pb");
    for len in 0..body.len() {
        let _ = decode(&body[..len], "apps/v1", "Deployment");
    }
    for at in 0..body.len() {
        for bit in 0..8 {
            let mut bad = body.to_vec();
            bad[at] ^= 1 << bit;
            let _ = decode(&bad, "apps/v1", "Deployment");
        }
    }
    // The unchanged body still decodes.
    assert!(decode(&body[..], "apps/v1", "Deployment").is_ok());
}

#[test]
fn the_table_is_sorted_and_every_root_and_reference_exists() {
    for message in MESSAGES {
        assert!(
            message.fields.windows(2).all(|w| w[0].tag < w[1].tag),
            "{}",
            message.name
        );
        for field in message.fields {
            if let Ty::Message(i) | Ty::MapMessage(Ty::Message(i)) = &field.ty {
                assert!(*i < MESSAGES.len(), "{}.{}", message.name, field.json);
            }
        }
    }
    for root in ROOTS {
        assert!(root.message < MESSAGES.len());
    }
}

/// A pod as the server keeps it: every special type, an embedded struct, a
/// map, repeated messages and a negative number.
fn stored_pod() -> serde_json::Value {
    json!({"apiVersion":"v1","kind":"Pod",
        "metadata":{"name":"web-0","namespace":"default","uid":"u-1",
            "resourceVersion":"42","creationTimestamp":"2024-05-01T10:00:00Z",
            "labels":{"b":"2","a":"1"},
            "managedFields":[{"manager":"kubectl","operation":"Update",
                "apiVersion":"v1","time":"2024-05-01T10:00:00Z","fieldsType":"FieldsV1",
                "fieldsV1":{"f:metadata":{"f:labels":{"f:a":{}}}}}]},
        "spec":{"containers":[{"name":"app","image":"nginx",
                "ports":[{"containerPort":8080,"protocol":"TCP"}],
                "resources":{"limits":{"memory":"128Mi"}},
                "livenessProbe":{"httpGet":{"path":"/healthz","port":"http"},
                    "periodSeconds":10}}],
            "volumes":[{"name":"data","emptyDir":{"sizeLimit":"1Gi"}}],
            "terminationGracePeriodSeconds":30,
            "nodeName":"node-1"},
        "status":{"phase":"Running","podIP":"10.0.0.7",
            "containerStatuses":[{"name":"app","ready":true,"restartCount":2,
                "image":"nginx","imageID":"sha256:1","started":true,
                "state":{"running":{"startedAt":"2024-05-01T10:00:05Z"}},
                "lastState":{"terminated":{"exitCode":-1,"reason":"Error",
                    "startedAt":"2024-05-01T09:59:00Z","finishedAt":"2024-05-01T10:00:00Z"}}}]}})
}

#[test]
fn a_stored_pod_encodes_to_what_decodes_back_to_it() {
    let pod = stored_pod();
    let body = encode(&pod).unwrap();
    assert_eq!(decode(&body, "", "").unwrap(), pod);
    // k8s-pb reads the same bytes as client-go would.
    let raw = marshal("v1", "Pod", &pod).unwrap();
    assert_eq!(super::envelope("v1", "Pod", &raw), body);
    let read = core::Pod::decode(raw.as_slice()).unwrap();
    let metadata = read.metadata.unwrap();
    assert_eq!(metadata.name.as_deref(), Some("web-0"));
    assert_eq!(
        metadata.labels,
        [("a".into(), "1".into()), ("b".into(), "2".into())].into()
    );
    assert_eq!(
        metadata.creation_timestamp.unwrap().seconds,
        Some(1_714_557_600)
    );
    let spec = read.spec.unwrap();
    assert_eq!(spec.termination_grace_period_seconds, Some(30));
    let port = spec.containers[0].liveness_probe.as_ref().unwrap();
    let port = port.handler.as_ref().unwrap().http_get.as_ref().unwrap();
    assert_eq!(port.port.as_ref().unwrap().str_val.as_deref(), Some("http"));
    assert_eq!(
        spec.volumes[0]
            .volume_source
            .as_ref()
            .unwrap()
            .empty_dir
            .as_ref()
            .unwrap()
            .size_limit
            .as_ref()
            .unwrap()
            .string
            .as_deref(),
        Some("1Gi")
    );
    let status = read.status.unwrap();
    let last = status.container_statuses[0].last_state.as_ref().unwrap();
    assert_eq!(last.terminated.as_ref().unwrap().exit_code, Some(-1));
    // Map keys go out sorted, as gogo writes them: the bytes do not depend on
    // the JSON's key order.
    let mut reordered = pod.clone();
    reordered["metadata"]["labels"] = json!({"a":"1","b":"2"});
    assert_eq!(encode(&reordered).unwrap(), body);
}

#[test]
fn lists_and_watch_frames_carry_the_items_bytes() {
    let pod = stored_pod();
    let raw = bytes::Bytes::from(marshal("v1", "Pod", &pod).unwrap());
    let meta = ListMeta {
        resource_version: "42",
        continue_token: "",
        remaining_item_count: Some(3),
    };
    let chunks = list_chunks("v1", "PodList", &meta, &[raw.clone(), raw.clone()]);
    let body: Vec<u8> = chunks.concat();
    assert_eq!(&body[..4], &PREFIX);
    let unknown =
        k8s_pb::apimachinery::pkg::runtime::Unknown::decode(&body[4..]).unwrap();
    assert_eq!(unknown.type_meta.unwrap().kind.as_deref(), Some("PodList"));
    let list = core::PodList::decode(unknown.raw.unwrap().as_slice()).unwrap();
    assert_eq!(list.items.len(), 2);
    let list_meta = list.metadata.unwrap();
    assert_eq!(list_meta.resource_version.as_deref(), Some("42"));
    assert_eq!(list_meta.remaining_item_count, Some(3));
    assert_eq!(list.items[1].encode_to_vec(), raw);

    let embedded = super::envelope("v1", "Pod", &raw);
    let mut stream = watch_frame("ADDED", &embedded);
    stream.extend(watch_frame("DELETED", &embedded));
    let WatchFrame {
        event_type,
        object,
        rest,
    } = read_watch_frame(&stream).unwrap().unwrap();
    assert_eq!(
        (event_type.as_str(), decode(&object, "", "").unwrap()),
        ("ADDED", pod)
    );
    let event =
        meta::WatchEvent::decode(&stream[4..stream.len() - rest.len()]).unwrap();
    assert_eq!(event.r#type.as_deref(), Some("ADDED"));
    assert_eq!(event.object.unwrap().raw.unwrap(), embedded);
    let last = read_watch_frame(rest).unwrap().unwrap();
    assert_eq!((last.event_type.as_str(), last.rest.len()), ("DELETED", 0));
    // A frame cut short is not a frame yet.
    assert!(read_watch_frame(&stream[..10]).unwrap().is_none());
}

#[test]
fn a_status_and_metadata_alone_encode_and_bad_json_is_an_error() {
    let status = json!({"apiVersion":"v1","kind":"Status","metadata":{},
        "status":"Failure","message":"pods \"x\" not found","reason":"NotFound",
        "details":{"name":"x","kind":"pods"},"code":404});
    assert_eq!(decode(&encode(&status).unwrap(), "", "").unwrap(), status);
    let partial = json!({"apiVersion":"meta.k8s.io/v1","kind":"PartialObjectMetadata",
        "metadata":{"name":"web-0","labels":{"app":"web"}}});
    assert_eq!(decode(&encode(&partial).unwrap(), "", "").unwrap(), partial);
    for bad in [
        json!({"apiVersion":"v1","kind":"Pod","metadata":{"name":5}}),
        json!({"apiVersion":"v1","kind":"Pod","metadata":{"labels":["a"]}}),
        json!({"apiVersion":"v1","kind":"Pod","metadata":{"creationTimestamp":"yesterday"}}),
        json!({"apiVersion":"v1","kind":"Pod","spec":{"containers":{}}}),
    ] {
        assert!(encode(&bad).is_err(), "{bad}");
    }
    assert!(matches!(
        encode(&json!({"apiVersion":"v9","kind":"Pod"})),
        Err(ProtobufError::NotRegistered { .. })
    ));
    assert!(matches!(
        encode(&json!({})),
        Err(ProtobufError::MissingKind(_))
    ));
}
