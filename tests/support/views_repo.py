"""A fixture repository for the answer views (page, terminal, chat, MCP): the acme repository with a hostile file
(`repos.hostile_copy`), a Python module of form fields whose classes are outlines of their methods (their
line numbers jump), five near-identical `_validated` methods in one file, constants, and tests of both a Python
class and the TypeScript retry helper (for "where is it tested?").
"""

from __future__ import annotations

from pathlib import Path

from tests.support.repos import ACME_REPO, hostile_copy, write_tree

FIELDS = '''"""Form fields of the shop's checkout: each one validates a single value a customer typed."""

import re

MAX_FIELD_LENGTH = 200
DEFAULT_CURRENCY = "EUR"


class Field:
    """A form field. Every field of the class validates the same way: strip, check, keep the errors."""

    def __init__(self, name: str, required: bool = True) -> None:
        self.name = name
        self.required = required
        self.errors: list[str] = []

    @property
    def label(self) -> str:
        """The field's name as a person reads it."""
        return self.name.replace("_", " ").title()

    def _validated(self, value: str) -> str:
        if self.required and not value:
            raise ValueError(f"{self.name} is required")
        return value

    def clean(self, value: str) -> str:
        """Strip the value and validate it; a value that fails is recorded in `errors`."""
        try:
            return self._validated(value.strip()[:MAX_FIELD_LENGTH])
        except ValueError as error:
            self.errors.append(str(error))
            raise


class EmailField(Field):
    """An e-mail address."""

    def _validated(self, value: str) -> str:
        if "@" not in value:
            raise ValueError(f"{self.name} is not an e-mail address")
        return super()._validated(value)


class PostcodeField(Field):
    """A postcode of five digits."""

    def _validated(self, value: str) -> str:
        if not re.fullmatch(r"[0-9]{5}", value):
            raise ValueError(f"{self.name} is not a postcode")
        return super()._validated(value)


class IbanField(Field):
    """A bank account number (IBAN)."""

    def _validated(self, value: str) -> str:
        if not re.fullmatch(r"[A-Z]{2}[0-9]{2}[A-Z0-9]{10,30}", value):
            raise ValueError(f"{self.name} is not an IBAN")
        return super()._validated(value)


class QuantityField(Field):
    """How many of an item."""

    def _validated(self, value: str) -> str:
        if not value.isdigit():
            raise ValueError(f"{self.name} is not a quantity")
        return super()._validated(value)


class MoneyField(Field):
    """An amount of money, in `DEFAULT_CURRENCY` unless the value names another one."""

    def __init__(self, name: str, currency: str = DEFAULT_CURRENCY) -> None:
        super().__init__(name)
        self.currency = currency

    @property
    def symbol(self) -> str:
        """The currency's sign."""
        return {"EUR": "\\u20ac", "USD": "$"}.get(self.currency, self.currency)

    @staticmethod
    def cents(value: str) -> int:
        """The amount in cents: "12.50" -> 1250."""
        whole, _, fraction = value.partition(".")
        return int(whole) * 100 + int((fraction + "00")[:2])

    def _validated(self, value: str) -> str:
        self.cents(value)
        return super()._validated(value)


VALIDATION_MESSAGES = {"required": "is required", "email": "is not an e-mail address"}


def validate_form(fields: list[Field], values: dict[str, str]) -> dict[str, list[str]]:
    """Clean every field of a submitted form; the errors of each field that failed, by its name."""
    for field in fields:
        try:
            field.clean(values.get(field.name, ""))
        except ValueError:
            pass
    return {field.name: field.errors for field in fields if field.errors}
'''

FIELD_TESTS = """from shop.fields import EmailField, Field, validate_form


def test_email_field_rejects_an_address_without_at():
    field = EmailField("email")
    try:
        field.clean("nobody")
    except ValueError:
        pass
    assert field.errors == ["email is not an e-mail address"]


def test_field_label_reads_like_words():
    assert Field("postal_code").label == "Postal Code"


def test_validate_form_collects_the_errors():
    assert validate_form([EmailField("email")], {"email": "nobody"}) == {"email": ["email is not an e-mail address"]}
"""

RETRY_TESTS = """import { withStripeBackoff } from "./retry";

test("withStripeBackoff retries a failing call until it succeeds", async () => {
  let calls = 0;
  const result = await withStripeBackoff(async () => {
    calls += 1;
    if (calls < 3) throw new Error("429");
    return "ok";
  });
  expect(result).toBe("ok");
});
"""

EXTRA_FILES = {
    "services/shop/shop/__init__.py": "",
    "services/shop/shop/fields.py": FIELDS,
    "services/shop/tests/test_fields.py": FIELD_TESTS,
    "packages/payments-core/src/retry.test.ts": RETRY_TESTS,
}


def views_copy(target: Path) -> Path:
    """The acme repository with the hostile file and `EXTRA_FILES`, at `target`."""
    return write_tree(hostile_copy(ACME_REPO, target), EXTRA_FILES)
