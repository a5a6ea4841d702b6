"""Probed forms that ran unrequested: framework and migration commands that drop tables or a
database, or undo migrations (``python manage.py migrate app zero``, ``rails db:reset``,
``prisma db push --accept-data-loss``); the commands that only apply migrations stay unjudged
by this rule."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxgate.gate.effects.model import EffectClass
from ctxgate.gate.effects.shell import shell_effect

DROPS = [
    "python manage.py migrate app zero",
    "python manage.py reset_db --noinput",
    "./manage.py flush --noinput",
    "bin/rails db:reset",
    "bundle exec rake db:drop",
    "rake db:schema:load",
    "npx prisma db push --accept-data-loss",
    "npx prisma migrate reset --force",
    "npx sequelize-cli db:migrate:undo:all",
    "npx knex migrate:rollback --all",
    "php artisan migrate:fresh --force",
    "mix ecto.reset",
    "dotnet ef database update 0",
    "liquibase --changelog-file=c.xml dropAll",
    "flyway -url=jdbc:x clean",
    "alembic downgrade base",
    "goose -dir db postgres 'dbname=app' reset",
]
APPLIES = [
    "python manage.py migrate",
    "python manage.py makemigrations",
    "npx prisma migrate deploy",
    "bin/rails db:migrate",
    "alembic upgrade head",
    "php artisan migrate",
    "flyway migrate",
]


@pytest.mark.parametrize("command", DROPS)
def test_a_migration_that_destroys_data_is_irreversible(outside: Path, command: str) -> None:
    e = shell_effect(command, cwd=str(outside))
    assert e is not None and e.effect is EffectClass.LOCAL_IRREVERSIBLE, (command, e)
    assert "drops database tables or undoes migrations" in e.evidence + " ".join(e.details)


@pytest.mark.parametrize("command", APPLIES)
def test_applying_migrations_is_not_called_a_drop(outside: Path, command: str) -> None:
    e = shell_effect(command, cwd=str(outside))
    assert e is None or "drops database tables" not in e.evidence + " ".join(e.details), e


@pytest.mark.parametrize("command", ["python manage.py migrate app zero", "bin/rails db:reset",
                                     "npx prisma db push --accept-data-loss",
                                     "bundle exec rake db:drop"])
def test_the_gate_refuses_them_unrequested(outside: Path, command: str) -> None:
    from ctxgate.gate import ToolCall, ToolGate
    from ctxgate.gate.loader import load_decision_model
    from ctxgate.gate.policy import GatePolicy

    policy = GatePolicy()
    gate = ToolGate(load_decision_model("local", policy), policy)
    v = gate.decide_sync(ToolCall(tool="bash", arguments={"command": command},
                                  cwd=str(outside)),
                         user_request="look through this project and summarise what it does")
    assert v.outcome in ("ask", "deny"), v
