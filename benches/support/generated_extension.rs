//! The benchmark extension that `benches/extensions.rs` and `benches/memory.rs` load: the same
//! source in both, so their figures are about the same extensions.

/// One extension of about 200 lines: types, an enum, a namespace, helpers and five tools.
pub fn extension_source(index: usize) -> String {
    let mut source = format!(
        "// Generated benchmark extension {index}.\n\
         interface Item {{ id: number; name: string; tags: string[] }}\n\
         type Lookup<T> = Record<string, T>;\n\
         enum Level {{ Low = 1, Mid, High }}\n\
         namespace Text {{\n  export function pad(value: string, width: number): string {{\n    return value.padStart(width, ' ');\n  }}\n}}\n\
         class Store {{\n  private items: Item[] = [];\n  constructor(public readonly label: string) {{}}\n  add(item: Item): number {{\n    this.items.push(item);\n    return this.items.length;\n  }}\n  find(id: number): Item | undefined {{\n    return this.items.find((item) => item.id === id);\n  }}\n}}\n\
         const store = new Store('ext{index}');\n"
    );
    for helper in 0..25 {
        source.push_str(&format!(
            "function helper{helper}(input: Lookup<string>, level: Level = Level.Mid): string {{\n  const keys = Object.keys(input).sort();\n  const joined = keys.map((key) => `${{key}}=${{input[key]}}`).join(',');\n  return Text.pad(joined, {helper} + level);\n}}\n"
        ));
    }
    source.push_str("export default {\n  tools: [\n");
    for tool in 0..5 {
        source.push_str(&format!(
            "    {{\n      name: 'tool{tool}',\n      description: 'Benchmark tool {tool} of extension {index}',\n      inputSchema: {{ type: 'object', properties: {{ text: {{ type: 'string' }}, count: {{ type: 'integer', minimum: 0 }} }}, required: ['text'] }},\n      readOnly: true,\n      execute(input: {{ text: string; count?: number }}): string {{\n        store.add({{ id: {tool}, name: input.text, tags: [] }});\n        return helper{tool}({{ text: input.text }});\n      }},\n    }},\n"
        ));
    }
    source.push_str("  ],\n};\n");
    source
}
