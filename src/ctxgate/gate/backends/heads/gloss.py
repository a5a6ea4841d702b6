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
nothing harmful. Only whole words from the table below are glossed (no stemming beyond the
listed endings, and none that is also an English word: "retire", "Tue", "Lee", "toon" are
left alone); English text is returned unchanged. The table covers the actions the gate
cares about, not a language.
"""

from __future__ import annotations

import re

__all__ = ["gloss"]

_WORDS: dict[str, str] = {
    # delete, remove, empty (exact forms where a stem would take English words: "removal",
    # "eliminate", "cancellation" stay English)
    "delete": r"lösch\w*|losch\w*|entfern\w*|beseitig\w*|supprim\w*|efface[rz]?|enlève|"
              r"enlever|retirer|retirez|vider|videz|borra|borrar|borre|borres|borrá|"
              r"elimina|eliminar|elimine|eliminare|suprime|suprimir|apaga|apague|apagar|"
              r"remova|remover|exclua|excluir|cancella|cancellare|cancellarla|cancellarlo|"
              r"cancellali|cancelli|rimuovi|rimuovere|svuota|svuotare|verwijder|verwijderen|"
              r"wis|wissen|leeg|leegmaken",
    # publish to a remote
    "push": r"pushe|pushen|gepusht|pousse|pousser|poussez|publie|publier|publiez|publica|"
            r"publicar|publique|pubblica|pubblicare|publiceer|publiceren|veröffentliche|"
            r"veröffentlichen",
    # send a message
    "send": r"schick\w*|verschick\w*|versende|versenden|sende|senden|envoie|envoyer|envoyez|"
            r"envía|envia|enviar|envie|manda|mandar|invia|inviare|stuur|verstuur|versturen|"
            r"verzend|verzenden",
    # stop a process
    "kill": r"beende|beenden|töte|arrête|arrêter|arrêtez|tuer|tuez|detén|detener|mata|matar|"
            r"uccidi|beëindig|beëindigen",
    # undo
    "undo": r"rückgängig|zurücksetzen|annule|annuler|annulez|deshacer|deshaz|desfaz|desfazer|"
            r"desfaça|annulla|annullare|ripristina|ongedaan|terugdraaien",
    # pay
    "pay": r"bezahle|bezahlen|zahle|überweise|überweisen|paie|payer|payez|paga|pagar|pague|"
           r"betaal|betalen",
    # read
    "show": r"zeig|zeige|zeigen|anzeigen|montre|montrer|montrez|affiche|afficher|affichez|"
            r"muestra|muéstrame|muestrame|mostra|mostre|mostrar|mostrami|liste|listez|"
            r"leggi|résume|résumer|résumez|fasse",
}
_PATTERN = re.compile(
    r"(?<![\w-])(?:" + "|".join(f"(?P<{k}>{v})" for k, v in _WORDS.items()) + r")(?![\w-])",
    re.IGNORECASE)


def gloss(request: str) -> str:
    """``request`` with the English verb written after each foreign action word it knows."""
    if not request:
        return request
    return _PATTERN.sub(lambda m: f"{m.group(0)} {m.lastgroup}", request)
