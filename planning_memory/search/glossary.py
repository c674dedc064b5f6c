"""The query in the other language: a Spanish-English glossary of a software project's words.

The embedding model is multilingual, but a question in one language about a memory written in
the other rarely shares a word with it, so BM25 cannot help, and the model alone often ranks
a memory that shares the question's language (and a few of its common words) above the right
one. ``translations`` gives, for each word of a query the glossary holds, its words in the
other language ("salida" -> "output", "exit"; "orders" -> "pedido", "pedidos"); search ranks
the documents holding them as a list of their own, as strong as the query's own words
(``hybrid``). A word of one of the related groups (``related.GROUPS``: packages, secrets,
git, tests, ...) is left to its group, which already holds both languages and more.

The glossary is hand-made: the common words of code, tools, data and shops, each line a
Spanish group and the English one it stands for. Pure.
"""

from __future__ import annotations

from collections.abc import Sequence

from planning_memory.search.related import related_words, singular
from planning_memory.search.stemming import fold

MAX_WORDS = 24  # translated words a query may add

_GLOSSARY = """
archivo archivos fichero ficheros = file files
carpeta carpetas directorio directorios = folder folders directory directories
ruta rutas = path paths
configuración configurar ajustes = config configuration settings
opción opciones = option options
comando comandos orden = command commands
consola = console terminal
salida = output exit
entrada = input
fallo fallos = failure failures
falla fallar falló fallan = fail fails failed failing
imprimir mostrar = print show display echo
mensaje mensajes aviso avisos = message messages notice
registro registros bitácora = log logs
código = code
publicar publicación lanzamiento = release publish
subir subida = upload
descargar descarga = download
progreso = progress
barra = bar
colores = colors colours
estado = status state
línea líneas = line lines
autocompletado autocompletar = completion autocomplete
usuario usuarios = user users
cliente clientes = customer customers client clients
pedido pedidos = order orders
consulta consultas = query queries
página páginas = page pages
lento lenta lentitud = slow slowness
tabla tablas = table tables
columna columnas = column columns
fila filas = row rows
fecha fechas = date dates
hora horas = hour hours time
horaria = timezone
precio precios = price prices
pago pagos cobro cobros = payment payments charge
tarjeta tarjetas = card cards
envío envíos = shipping shipment
imagen imágenes foto fotos = image images photo photos
producto productos = product products
formato formatos = format formats
servidor servidores = server servers
respuesta respuestas = response responses
reintentar reintento reintentos = retry retries
espera esperar = wait waiting
límite límites = limit limits
colgado bloqueado = hang hung stuck
sesión sesiones = session sessions
permiso permisos = permission permissions
seguridad = security
entorno entornos = environment environments
repositorio = repository repo
documentación = documentation docs
enlace enlaces = link links
encabezado encabezados título títulos = heading headings title titles
plantilla plantillas = template templates
siguiente = next
anterior = previous
número números = number numbers
calcular = compute calculate
elegir escoger elegimos = choose pick chose
decidir decidimos = decide
guardar guardamos = save store
borrar eliminar = delete remove
actualizar actualización = update
crear = create
leer lectura = read
escribir escritura = write
cerrar = close
abrir = open
tubería = pipe
atómico atómica = atomic
temporal temporales = temporary
confirmación = confirmation
advertencia advertencias = warning warnings
ayuda = help
texto textos = text
ancho = width
idioma idiomas = language languages
hilo hilos = thread threads
asíncrono asíncrona = async asynchronous
importación importaciones = import imports
arranque = startup
pantalla = screen
teclado = keyboard
interactivo interactiva = interactive
ventana ventanas = window windows
codificación = encoding
carácter caracteres = character characters
validar validación = validate validation
dirección direcciones = address addresses
correo correos = email mail
transacción transacciones = transaction transactions
bloqueo = lock locking
cola encolar = queue
tarea tareas = task tasks job jobs
programada programadas = scheduled
informe informes = report reports
búsqueda buscar = search
índice = index
duplicado duplicados = duplicate duplicates
evento eventos = event events
notas = notes
etiqueta etiquetas = tag tags label
firma firmar = signature sign
incorrecto incorrecta equivocado = wrong incorrect
cambio cambios = change changes
datos = data
"""


def _tables() -> tuple[dict[str, tuple[str, ...]], dict[str, tuple[str, ...]]]:
    spanish: dict[str, list[str]] = {}
    english: dict[str, list[str]] = {}
    for line in _GLOSSARY.strip().splitlines():
        left, right = line.split("=")
        es, en = left.split(), right.split()
        for word in map(fold, es):  # a word both languages write alike needs no translation
            spanish.setdefault(word, []).extend(w for w in en if w not in {word, *spanish[word]})
        for word in en:
            found = english.setdefault(word, [])
            found.extend(w for w in es if fold(w) != word and w not in found)
    return (
        {w: tuple(ws) for w, ws in spanish.items()},
        {w: tuple(ws) for w, ws in english.items()},
    )


SPANISH, ENGLISH = _tables()


def translations(terms: Sequence[str]) -> list[str]:
    """The other language's words for the query's ``terms`` (lower-case words, accents or
    not), in order, none of them a term already, at most ``MAX_WORDS``; a term of a related
    group is left to its group (``related_words``)."""
    found: dict[str, None] = {}
    bare_terms = {fold(t) for t in terms}
    for term in terms:
        if related_words([term]):
            continue
        bare = fold(term)
        for table in (SPANISH, ENGLISH):
            words = table.get(bare) or table.get(singular(bare), ())
            found.update((w, None) for w in words if fold(w) not in bare_terms)
    return list(found)[:MAX_WORDS]
