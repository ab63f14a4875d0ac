//! Exports for people's tools, parsed back: a profile as Chrome trace JSON (nested calls as
//! nested slices, one track per thread) and a traced graph as Graphviz DOT (ops as nodes, tensors
//! as labelled edges).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value as Json;
use switchyard::ops::{add, full, mean, mul, sum};
use switchyard::{DType, Device, Tensor, op, profile, trace};
use switchyard_backends as _;

/// `sum(x * x)`: a composite that calls two other ops.
#[op(name = "export::sum_of_squares")]
pub fn sum_of_squares(x: &Tensor) -> Tensor {
    sum(&mul(x, x))
}

/// A complete (`"X"`) event: name, thread, start and end in nanoseconds, depth.
#[derive(Debug)]
struct Slice {
    name: String,
    tid: u64,
    start: u64,
    end: u64,
    depth: u64,
}

/// Microseconds (as written, with nanosecond digits) to nanoseconds.
fn nanos(v: &Json) -> u64 {
    (v.as_f64().expect("a number of microseconds") * 1000.0).round() as u64
}

/// Parses the Chrome trace: its complete events, and its thread names by `tid`.
fn parse_chrome(json: &str) -> (Vec<Slice>, BTreeMap<u64, String>) {
    let doc: Json = serde_json::from_str(json).expect("valid JSON");
    let events = doc["traceEvents"].as_array().expect("a traceEvents array");
    let pids: BTreeSet<u64> = events.iter().map(|e| e["pid"].as_u64().unwrap()).collect();
    assert_eq!(pids, BTreeSet::from([u64::from(std::process::id())]));
    let mut slices = Vec::new();
    let mut names = BTreeMap::new();
    for event in events {
        let tid = event["tid"].as_u64().expect("a tid");
        match event["ph"].as_str() {
            Some("X") => slices.push(Slice {
                name: event["name"].as_str().unwrap().to_owned(),
                tid,
                start: nanos(&event["ts"]),
                end: nanos(&event["ts"]) + nanos(&event["dur"]),
                depth: event["args"]["depth"].as_u64().unwrap(),
            }),
            Some("M") => {
                assert_eq!(event["name"], "thread_name");
                names.insert(tid, event["args"]["name"].as_str().unwrap().to_owned());
            }
            other => panic!("unexpected event phase {other:?}"),
        }
    }
    (slices, names)
}

#[test]
fn a_profile_is_chrome_trace_json_with_nested_slices() {
    let x = Tensor::vector(&[1.0, 2.0, 3.0]);
    let (total, profile) = profile(|| add(&sum_of_squares(&x), &sum(&x)));
    assert_eq!(total.to_vec::<f32>(), [20.0]);
    let (slices, names) = parse_chrome(&profile.to_chrome_trace());

    let order: Vec<(&str, u64)> = slices.iter().map(|s| (s.name.as_str(), s.depth)).collect();
    assert_eq!(
        order,
        [
            ("export::sum_of_squares", 0),
            ("switchyard::mul", 1),
            ("switchyard::sum", 1),
            ("switchyard::sum", 0),
            ("switchyard::add", 0)
        ]
    );
    // Nested by time: the composite's calls lie inside its slice, one after the other; the
    // top-level calls do not overlap.
    let [outer, mul, inner_sum, sum, add] = &slices[..] else {
        unreachable!()
    };
    for inner in [mul, inner_sum] {
        assert!(
            outer.start <= inner.start && inner.end <= outer.end,
            "{slices:#?}"
        );
    }
    assert!(mul.end <= inner_sum.start, "{slices:#?}");
    assert!(
        outer.end <= sum.start && sum.end <= add.start,
        "{slices:#?}"
    );
    // One track: this thread's, named.
    let tids: BTreeSet<u64> = slices.iter().map(|s| s.tid).collect();
    assert_eq!(tids.len(), 1);
    let tid = *tids.first().unwrap();
    assert_eq!(names.keys().copied().collect::<Vec<_>>(), [tid]);
    assert_eq!(
        names[&tid],
        std::thread::current().name().unwrap_or_default()
    );
    // The text table stays.
    assert!(profile.to_string().starts_with("op "));
}

#[test]
fn profiles_of_two_threads_are_two_tracks() {
    let profile_on = |name: &str| {
        std::thread::Builder::new()
            .name(name.to_owned())
            .spawn(|| profile(|| mul(&Tensor::vector(&[1.0]), &Tensor::vector(&[2.0]))).1)
            .unwrap()
            .join()
            .unwrap()
    };
    let mut merged = profile_on("worker \"a\"");
    let b = profile_on("worker b");
    merged.slices.extend(b.slices);
    merged.threads.extend(b.threads);
    let (slices, names) = parse_chrome(&merged.to_chrome_trace());
    assert_eq!(slices.len(), 2);
    assert_ne!(slices[0].tid, slices[1].tid);
    assert_eq!(names[&slices[0].tid], "worker \"a\"");
    assert_eq!(names[&slices[1].tid], "worker b");
}

/// A DOT graph as statements: nodes with their attributes, edges with theirs.
#[derive(Debug, Default)]
struct Dot {
    nodes: BTreeMap<String, BTreeMap<String, String>>,
    edges: Vec<(String, String, BTreeMap<String, String>)>,
}

/// DOT's tokens: identifiers, quoted strings (unescaped), and punctuation.
fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {}
            '"' => {
                let mut s = String::new();
                loop {
                    match chars.next().expect("a closed string") {
                        '"' => break,
                        '\\' => match chars.next().expect("an escaped character") {
                            'n' => s.push('\n'),
                            other => s.push(other),
                        },
                        other => s.push(other),
                    }
                }
                out.push(format!("\"{s}"));
            }
            '-' if chars.peek() == Some(&'>') => {
                chars.next();
                out.push("->".to_owned());
            }
            '{' | '}' | '[' | ']' | '=' | ';' | ',' => out.push(c.to_string()),
            c if c.is_alphanumeric() || c == '_' => {
                let mut s = c.to_string();
                while let Some(&n) = chars.peek().filter(|n| n.is_alphanumeric() || **n == '_') {
                    s.push(n);
                    chars.next();
                }
                out.push(s);
            }
            other => panic!("unexpected character {other:?} in DOT"),
        }
    }
    out
}

/// Parses what `Graph::to_dot` writes: `digraph name { stmt; … }`, each statement a node, an
/// edge `a -> b`, or default attributes (`node [...]`, `edge [...]`), with an attribute list.
fn parse_dot(text: &str) -> Dot {
    let tokens = tokens(text);
    let id = |t: &str| t.strip_prefix('"').unwrap_or(t).to_owned();
    assert_eq!(&tokens[..3], ["digraph", "switchyard", "{"], "{text}");
    assert_eq!(tokens.last().map(String::as_str), Some("}"), "{text}");
    let mut dot = Dot::default();
    for statement in tokens[3..tokens.len() - 1].split(|t| t == ";") {
        if statement.is_empty() {
            continue;
        }
        let (head, attrs) = match statement.iter().position(|t| t == "[") {
            Some(at) => (&statement[..at], &statement[at + 1..]),
            None => (statement, &[][..]),
        };
        assert_eq!(
            attrs.last().map(String::as_str).unwrap_or("]"),
            "]",
            "{statement:?}"
        );
        let mut map = BTreeMap::new();
        for pair in attrs[..attrs.len().saturating_sub(1)].split(|t| t == ",") {
            let [key, eq, value] = pair else {
                panic!("bad attribute {pair:?}")
            };
            assert_eq!(eq, "=");
            map.insert(id(key), id(value));
        }
        match head {
            [kind] if kind == "node" || kind == "edge" => {}
            [node] => {
                dot.nodes.insert(id(node), map);
            }
            [from, arrow, to] if arrow == "->" => dot.edges.push((id(from), id(to), map)),
            other => panic!("bad statement {other:?}"),
        }
    }
    dot
}

#[test]
fn a_graph_is_graphviz_dot_with_ops_as_nodes_and_tensors_as_edges() {
    let (x, y) = (Tensor::vector(&[1.0, 2.0]), Tensor::vector(&[3.0, 4.0]));
    let (_, graph) = trace(|| mean(&add(&mul(&x, &y), &x)));
    let dot = parse_dot(&graph.to_dot());

    let label = |node: &str| dot.nodes[node]["label"].as_str();
    assert_eq!(
        dot.nodes.keys().map(String::as_str).collect::<Vec<_>>(),
        ["call0", "call1", "call2", "input0", "input1", "output2"]
    );
    assert_eq!(
        [label("call0"), label("call1"), label("call2")],
        ["switchyard::mul", "switchyard::add", "switchyard::mean"]
    );
    assert_eq!(dot.nodes["input0"]["shape"], "ellipse");
    let edges: Vec<(&str, &str, &str)> = dot
        .edges
        .iter()
        .map(|(a, b, attrs)| (a.as_str(), b.as_str(), attrs["label"].as_str()))
        .collect();
    // Labels are the tensors' summaries: shape and device (and dtype, where the type says it).
    let vector = graph.calls[0].inputs[0].as_str();
    let scalar = graph.calls[2].outputs[0].as_str();
    assert!(vector.starts_with("Tensor[2]") && scalar.starts_with("Tensor[]"));
    assert_eq!(
        edges,
        [
            ("input0", "call0", vector),
            ("input1", "call0", vector),
            ("call0", "call1", vector),
            ("input0", "call1", vector),
            ("call1", "call2", vector),
            ("call2", "output2", scalar),
        ]
    );
}

/// An op whose name needs escaping in DOT (and would be an escape sequence if unescaped).
#[op(name = "export::odd \"name\" \\l")]
pub fn odd(x: &Tensor) -> Tensor {
    mul(x, x)
}

#[test]
fn dot_labels_keep_non_tensor_arguments_and_odd_names() {
    let (_, graph) = trace(|| odd(&full(&[2], 1.5, DType::F32, Device::Cpu)));
    let dot = parse_dot(&graph.to_dot());
    let full_label = &dot.nodes["call0"]["label"];
    assert!(
        full_label.starts_with("switchyard::full\n") && full_label.contains("1.5"),
        "{full_label:?}"
    );
    assert_eq!(dot.nodes["call1"]["label"], "export::odd \"name\" \\l");
    assert_eq!(dot.edges.len(), 2, "{dot:?}");
}
