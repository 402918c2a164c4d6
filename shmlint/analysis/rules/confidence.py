"""How a finding's confidence is decided: the payload evidence (``shmlint explain confidence``)."""

from __future__ import annotations

TOPIC = "confidence"

CONFIDENCE_DOC = """\
## What it decides
Every finding of SHM101–SHM107 is `high` or `medium`, or not reported at all. Only `high` is
shown by default (`--min-confidence medium` adds the rest). What decides is the *payload*: what
the read returns, and whether that can hold memory Ray hands back zero-copy.

## The evidence, in order
The first of these that says something decides:

1. **The value's own annotation**: `answers: list[str] = ray.get(ref)`, `cast(str,
   ray.get(ref))`, or a local container declared `list[str]` that the value goes into. A
   value declared to hold no arrays drops the read: it is never reported. So does a variable
   where a type test for builtin scalar types (or library types known array-free, by
   qualified name) holds: `if isinstance(n, int): self.count = n`, past `if not
   isinstance(n, int): return`, after `assert isinstance(x, (int, str))`. A test for a
   project class narrows nothing (a subclass may hold arrays), nor does a test for an array
   type (where it failed, nothing is known).
2. **The payload of the read**: the declared return type of what produced the ref — a
   `@ray.remote` function (`f.remote()`, `ray.remote(f)`, or one made remote where it is
   called: `ray.remote(num_gpus=2)(f).remote()`), a method of an actor class
   (`handle.m.remote()`, resolved by name among the project's actor classes — decorated, or
   made actors anywhere, `ray.remote(num_gpus=1)(Worker).remote()` — their own methods and
   those they inherit from the project's classes; where several define `m`, only if they
   agree), or for a compiled graph the methods bound at its outputs
   (`actor.m.bind(inp)`, `MultiOutputNode([...])`). Unannotated, evident return expressions
   count (`return np.zeros(n)`, `return [1, 2]`, `return Rollout(...)`, `return len(x)`,
   and calls known to give scalars: `return ray.util.get_node_ip_address()`, `return
   socket.gethostname(), os.getpid()`, `ray.get_runtime_context().get_node_id()`,
   `ray.get_gpu_ids()[0]`), also through a local bound once to one and changed by nothing
   (`addr = ray.util.get_node_ip_address(); return addr`). Project-wide: the
   actor class may live in another module. A call of a project function that returns what it
   reads is rated the same way, by that function's declared return type (`ip = node_ip(pg)`
   with `def node_ip(pg) -> str: return ray.get(...)` reads no arrays); a read rated
   array-free by what made its ref makes no function returning it a reader.
3. **The sink's declared type**: the enclosing function's return annotation, the attribute's
   or variable's annotation; a value entering a project record's constructor is rated by the
   field it enters (`Batch(tokens=..., answers=...)`).

## Array evidence and array-free evidence
- *Arrays*: numpy (`numpy.ndarray`, `numpy.typing.NDArray`), pandas and pyarrow values,
  project classes with such fields (through NamedTuples, dataclasses, Optional, unions,
  containers), configured `array-types`; torch tensors only with `zero-copy-torch = true`
  (`--zero-copy-torch`), which mirrors Ray's `RAY_ENABLE_ZERO_COPY_TORCH_TENSORS`.
- *Array-free*: scalars, strings, bytes, containers of those, torch tensors by default (Ray
  copies them), numpy scalars (`np.int64`, `np.float32`: their bytes are pickled in band),
  enums (a member unpickles as the class's own member, looked up by value),
  project classes whose fields are all array-free, and library objects Ray
  rebuilds without a shared buffer: `xgboost.Booster` (its model is pickled as bytes and
  loaded into a new native handle), `pyarrow.Schema`, `DataType` and `Field`. (Not
  `lightgbm.Booster`: after a custom `feval` it holds numpy buffers that come back zero-copy.)
- Type names are matched by qualified name where the module's imports resolve them, so
  `jax.Array` or a project's own `Table` is not pyarrow's; by their last component only when
  the name does not resolve. A project class named like an array-free type (`Tensor`,
  `Path`) is rated by its fields when they say something.

## The result
- `high`: array evidence, or a compiled-graph channel read of unknown payload (the read lock
  is the stall).
- `medium`: an object-store read of unknown payload.
- not reported: array-free evidence, channel reads included (a value with no zero-copy buffer
  does not keep the read lock).

The message says which evidence decided, e.g. "(remote method `Worker.verify` returns
`list[float]`)"; JSON carries it as `evidence`, SARIF as `properties.evidence`.

## Not a retention
- `.remote(...)`, `.options(...)`, `ray.remote(f)`, `ray.put(...)` and actor constructors
  return refs and handles, never views of their arguments. A remote callable kept in a
  variable or an attribute (`task = f.options(num_cpus=2)`) keeps what its refs read:
  `ray.get(task.remote())` is rated by what `f` returns.
- A value returned by a `@ray.remote` function or a method of a `@ray.remote` class, or by a
  `@serve.deployment` function or class method (its replicas are actors), is serialised by
  Ray into a new object and dropped by the worker: SHM101 does not apply there, unless the
  project also calls that function or method directly.
- The result of a project function declared to return no arrays (`-> list[float]`) is clean
  whatever flows in.
"""


def render_markdown() -> str:
    """The page ``docs/rules/confidence.md``."""
    return (
        "# Confidence: payload evidence\n\n"
        "<!-- Generated from shmlint/analysis/rules/confidence.py by scripts/render_rule_docs.py:"
        " edit the text there, then re-run the script. -->\n\n"
        f"Printed by `shmlint explain {TOPIC}`.\n\n{CONFIDENCE_DOC}"
    )
