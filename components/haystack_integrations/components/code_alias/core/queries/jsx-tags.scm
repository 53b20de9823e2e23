; code-alias additions for JSX (JavaScript and TSX; see core/tags.py): components used in JSX are calls of them.
(jsx_opening_element name: [(identifier) @name (member_expression property: (property_identifier) @name)]) @reference.call
(jsx_self_closing_element name: [(identifier) @name (member_expression property: (property_identifier) @name)]) @reference.call
