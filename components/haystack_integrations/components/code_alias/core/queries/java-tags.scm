; code-alias additions to tree-sitter-java's queries/tags.scm (read after it; see core/tags.py).

; Definitions the wheel leaves out.
(constructor_declaration name: (identifier) @name) @definition.method
(record_declaration name: (identifier) @name) @definition.class
(enum_declaration name: (identifier) @name) @definition.enum
(annotation_type_declaration name: (identifier) @name) @definition.interface
(constant_declaration declarator: (variable_declarator name: (identifier) @name)) @definition.constant
(field_declaration declarator: (variable_declarator name: (identifier) @name)) @definition.field

; Type uses (a declaration's own name is an `identifier`, never a `type_identifier`), method references
; (`Foo::bar`), imports and typed variables.
((type_identifier) @name @reference.type (#not-eq? @name "var"))
(method_reference (identifier) @name .) @reference.call
(import_declaration) @reference.import
(local_variable_declaration) @reference.bind
(formal_parameter) @reference.bind
(field_declaration) @reference.bind
