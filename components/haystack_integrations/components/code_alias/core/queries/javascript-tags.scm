; code-alias additions for JavaScript's own grammar (see core/tags.py): a class's superclass (TypeScript's grammar
; wraps it in `extends_clause`, in typescript-tags.scm).
(class_heritage [
  (identifier) @name
  (member_expression property: (property_identifier) @name)
] @reference.inherit)
