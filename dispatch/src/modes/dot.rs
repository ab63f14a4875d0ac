//! A [`Graph`] as Graphviz DOT: ops as nodes, tensors as edges labelled with what the tensor
//! type's summary says of them (shape, device and, where the type says it, dtype).
//! Written with std alone; strings are escaped as DOT requires.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::io;

use super::trace::{Graph, Source};

impl Graph {
    /// The graph in Graphviz DOT: one box per traced call (`call0`, `call1`, … in call order,
    /// labelled with the op's name and its non-tensor arguments), one ellipse per tensor from
    /// outside the trace (`input0`, …) and per result no traced call used (`output0`, …), and an
    /// edge for every tensor passed, labelled with its summary (`Tensor[2, 3]:f32@cpu`). Render it
    /// with `dot -Tsvg graph.dot -o graph.svg`.
    ///
    /// ```
    /// use switchyard::ops::{mean, mul};
    /// use switchyard::{Tensor, trace};
    /// use switchyard_backends as _;
    ///
    /// let x = Tensor::vector(&[1.0, 2.0]);
    /// let (_, graph) = trace(|| mean(&mul(&x, &x)));
    /// let dot = graph.to_dot();
    /// assert!(dot.contains(r#"call0 -> call1 [label="Tensor[2]:f32@cpu"];"#));
    /// // std::fs::write("graph.dot", dot)?;
    /// ```
    pub fn to_dot(&self) -> String {
        let mut out = String::from(
            "digraph switchyard {\n  node [shape=box, fontname=\"monospace\"];\n  \
             edge [fontname=\"monospace\"];\n",
        );
        // The call that produced each `%n`.
        let producers: Vec<usize> = self
            .calls
            .iter()
            .enumerate()
            .filter_map(|(i, c)| c.id.map(|_| i))
            .collect();
        let mut inputs = BTreeSet::new();
        let mut used = BTreeSet::new();
        for (i, call) in self.calls.iter().enumerate() {
            let scalars: Vec<&str> = call
                .sources
                .iter()
                .zip(&call.inputs)
                .filter(|(s, _)| **s == Source::Value)
                .map(|(_, v)| v.as_str())
                .collect();
            let label = if scalars.is_empty() {
                call.op.to_owned()
            } else {
                format!("{}\n{}", call.op, scalars.join(", "))
            };
            let _ = writeln!(out, "  call{i} [label={}];", dot_string(&label));
            for (source, described) in call.sources.iter().zip(&call.inputs) {
                match *source {
                    Source::Produced(id) => {
                        let Some(&from) = producers.get(id) else {
                            continue;
                        };
                        used.insert(id);
                        let label = self.calls[from].outputs.first().unwrap_or(described);
                        let _ = writeln!(
                            out,
                            "  call{from} -> call{i} [label={}];",
                            dot_string(label)
                        );
                    }
                    Source::Input(n) => {
                        if inputs.insert(n) {
                            let _ = writeln!(
                                out,
                                "  input{n} [label={}, shape=ellipse];",
                                dot_string(&format!("input {n}"))
                            );
                        }
                        let _ = writeln!(
                            out,
                            "  input{n} -> call{i} [label={}];",
                            dot_string(described)
                        );
                    }
                    Source::Value => {}
                }
            }
        }
        for (id, &from) in producers.iter().enumerate() {
            if used.contains(&id) {
                continue;
            }
            let label = self.calls[from].outputs.first().map_or("", String::as_str);
            let _ = writeln!(
                out,
                "  output{id} [label={}, shape=ellipse];\n  call{from} -> output{id} [label={}];",
                dot_string(&format!("%{id}")),
                dot_string(label)
            );
        }
        out.push_str("}\n");
        out
    }

    /// Writes [`Graph::to_dot`] to `out` (a `.dot` file, for Graphviz).
    pub fn write_dot(&self, mut out: impl io::Write) -> io::Result<()> {
        out.write_all(self.to_dot().as_bytes())
    }
}

/// `s` as a DOT quoted string that Graphviz shows as written: quotes and backslashes escaped
/// (a lone `\` would start an escape such as `\l`), a newline as `\n` (a line break in a label).
fn dot_string(s: &str) -> String {
    // A carriage return is dropped: the newline beside it already breaks the line.
    super::quoted(s, |c, _| c == '\r')
}

#[cfg(test)]
mod tests {
    use super::dot_string;

    #[test]
    fn dot_strings_show_as_written() {
        assert_eq!(dot_string("mul"), r#""mul""#);
        assert_eq!(dot_string("a\"b\\l\nc"), r#""a\"b\\l\nc""#);
    }
}
