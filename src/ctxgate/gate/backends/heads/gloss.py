"""English glosses for the action words of requests written in other languages.

The local model reads English: its request features match the request's action words to the
call's (``delete`` ~ ``rm``) and its sentence vectors come from English text. A request in
German, French, Spanish, Portuguese, Italian or Dutch ("lösche das build-Verzeichnis") shares
only its object words with the call, so an ordered delete scored unrequested and was denied,
while a foreign verb that happens to look English ("pushe") was read as an order whatever
came after it.

:func:`gloss` writes the English verb right after each foreign action word it knows
("lösche delete das build-Verzeichnis"), in place, so that a negation around the word
(:mod:`.intent`: "lösche es nicht", "ne supprime pas") still applies to the gloss. Words of
reading ("zeig", "montre", "muestra") get ``show``, so a request that only asks to read orders
nothing harmful. Only the exact word forms of the table are glossed (no stemming), none of
which is also an English word ("removal", "terminal", "retire", "Tue", "Lee" are left alone);
English text comes back unchanged. The table covers the actions the gate cares about, not a
language. Cost: one pass over the words, about 10 µs for a one-line request and 0.4 ms for
10 KB.
"""

from __future__ import annotations

import re

__all__ = ["gloss"]

_FORMS: dict[str, str] = {
    # delete, remove, empty: imperatives and infinitives (a participle, "gelöscht", tells
    # what happened; exact forms, so "removal", "eliminate", "cancellation" stay English)
    "delete": "lösche löschen entferne entfernen beseitige beseitigen "
              "supprime supprimer supprimez supprimes efface effacer effacez enlève enlever "
              "retirer retirez vider videz borra borrar borre borres borrá elimina eliminar "
              "elimine eliminare suprime suprimir apaga apague apagar remova remover exclua "
              "excluir cancella cancellare cancellarla cancellarlo cancellali cancelli rimuovi "
              "rimuovere svuota svuotare verwijder verwijderen wis wissen leeg leegmaken",
    # publish to a remote
    "push": "pushe pushen pousse pousser poussez publie publier publiez publica "
            "publicar publique pubblica pubblicare publiceer publiceren veröffentliche "
            "veröffentlichen",
    # send a message
    "send": "schick schicke schicken verschicke verschicken versende versenden sende senden "
            "envoie envoyer envoyez envía envia enviar envie manda mandar invia inviare stuur "
            "verstuur versturen verzend verzenden",
    # stop a process
    "kill": "beende beenden töte arrête arrêter arrêtez tuer tuez detén detener mata matar "
            "uccidi beëindig beëindigen",
    # undo
    "undo": "rückgängig zurücksetzen annule annuler annulez deshacer deshaz desfaz desfazer "
            "desfaça annulla annullare ripristina ongedaan terugdraaien",
    # pay
    "pay": "bezahle bezahlen zahle überweise überweisen paie payer payez paga pagar pague "
           "betaal betalen",
    # read
    "show": "zeig zeige zeigen anzeigen montre montrer montrez affiche afficher affichez "
            "muestra muéstrame muestrame mostra mostre mostrar mostrami liste listez leggi "
            "résume résumer résumez fasse",
}
_GLOSS = {form: english for english, forms in _FORMS.items() for form in forms.split()}
_FIRST = frozenset(form[:3] for form in _GLOSS)
_WORD = re.compile(r"(?<![\w-])[^\W\d_]{2,}(?![\w-])")


def gloss(request: str) -> str:
    """``request`` with the English verb written after each foreign action word it knows."""
    if not request:
        return request

    def one(m: re.Match[str]) -> str:
        word = m.group(0)
        low = word.lower()
        if low[:3] not in _FIRST or low not in _GLOSS:
            return word
        return f"{word} {_GLOSS[low]}"

    return _WORD.sub(one, request)
