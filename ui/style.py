"""The look of the web chat: a gradio theme with local fonts only, and the page's CSS."""

from __future__ import annotations

from typing import Any

# System fonts first: nothing is fetched from a font service.
FONT = ["ui-sans-serif", "system-ui", "-apple-system", "Segoe UI", "Roboto", "sans-serif"]
MONO = ["ui-monospace", "SFMono-Regular", "Menlo", "Consolas", "monospace"]


def theme() -> Any:
    """A quiet theme: slate greys, one blue accent, system fonts."""
    import gradio as gr

    return gr.themes.Default(
        primary_hue="blue",
        neutral_hue="slate",
        radius_size="md",
        font=FONT,
        font_mono=MONO,
    ).set(body_background_fill="#f6f7f9", block_border_width="1px")


CSS = """
/* a flex item with auto margins shrinks to its content: the full width, then the cap */
.gradio-container { width: 100% !important; max-width: 1320px !important;
  margin: 0 auto !important; }
.app-header { display: flex; justify-content: space-between; align-items: flex-end;
  gap: 16px; padding: 4px 2px 8px; border-bottom: 1px solid #e2e8f0; }
.app-header h1 { font-size: 1.45rem; margin: 0; font-weight: 650; color: #0f172a; }
.app-header p { margin: 2px 0 0; color: #64748b; font-size: .92rem; }
.index-summary { color: #475569; font-size: .85rem; text-align: right;
  font-variant-numeric: tabular-nums; }
.banner { background: #fffbeb; border: 1px solid #f59e0b; color: #78350f; border-radius: 8px;
  padding: 10px 14px; font-size: .93rem; }
.banner code { background: #fef3c7; padding: 0 4px; border-radius: 4px; }
.banner-detail { color: #92400e; font-size: .82rem; margin-top: 4px; }

#transcript { height: 64vh; min-height: 360px; overflow-y: auto !important; background: #fff;
  border: 1px solid #e2e8f0; border-radius: 10px; padding: 6px 18px; }
.empty-chat { padding: 44px 8px 28px; text-align: center; color: #475569; }
.empty-chat h3 { color: #0f172a; font-size: 1.2rem; margin: 0 0 8px; }
.empty-chat p { max-width: 620px; margin: 0 auto; line-height: 1.55; }
#examples { justify-content: center; gap: 8px; flex-wrap: wrap; }
#examples button { flex: 0 0 auto !important; width: auto !important; white-space: nowrap;
  font-weight: 450; border-radius: 999px; padding: 4px 14px;
  background: #fff; border: 1px solid #cbd5e1; color: #1e3a8a; }
#examples button:hover { background: #eff6ff; border-color: #93c5fd; }

.turn { padding: 16px 0 18px; border-bottom: 1px solid #edf0f4; }
.turn:last-child { border-bottom: none; }
.question { font-weight: 600; color: #0f172a; font-size: 1.02rem; margin-bottom: 10px;
  display: flex; gap: 10px; align-items: baseline; }
.who { font-size: .7rem; font-weight: 700; letter-spacing: .06em; text-transform: uppercase;
  color: #fff; background: #64748b; border-radius: 4px; padding: 2px 6px; flex: none; }
.turn-body { display: grid; grid-template-columns: minmax(0, 11fr) minmax(0, 9fr); gap: 22px; }
@media (max-width: 900px) { .turn-body { grid-template-columns: minmax(0, 1fr); } }
.answer { line-height: 1.6; color: #1e293b; font-size: .97rem; }
.answer p { margin: 0 0 8px; }
.answer ul { margin: 0 0 8px; padding-left: 20px; }
.answer li { margin-bottom: 6px; }
.answer-text.draft { color: #475569; }
.working { color: #64748b; font-size: .88rem; font-style: italic; margin-top: 2px; }
.working::before { content: ""; display: inline-block; width: 8px; height: 8px;
  border-radius: 50%; background: #3b82f6; margin-right: 8px; animation: pulse 1s infinite; }
@keyframes pulse { 50% { opacity: .25; } }
sup.cite { font-size: .74em; color: #64748b; white-space: nowrap; }
sup.cite a { color: #1d4ed8; font-weight: 600; text-decoration: none; padding: 0 1px; }
sup.cite a:hover { text-decoration: underline; }
.searched { color: #64748b; font-size: .83rem; margin-top: 8px; }
.searched q { color: #334155; font-style: italic; }
.searched .how { white-space: nowrap; }
.math { font-family: "Latin Modern Math", "STIX Two Math", "Cambria Math", "Times New Roman",
  serif; font-size: 1.06em; white-space: nowrap; }
.math sup, .math sub { font-size: .72em; line-height: 0; }
.checks { margin-top: 8px; font-size: .82rem; color: #64748b; }
.checks summary { cursor: pointer; }
.checks p { margin: 2px 0; } .checks ul { margin: 4px 0; padding-left: 18px; }
.checks li { margin-bottom: 4px; } .checks .reason { color: #94a3b8; }
.refusal { background: #f1f5f9; border-left: 3px solid #64748b; padding: 10px 12px;
  border-radius: 0 6px 6px 0; color: #334155; }
.error { background: #fef2f2; border-left: 3px solid #dc2626; padding: 10px 12px;
  border-radius: 0 6px 6px 0; color: #7f1d1d; }

.aside-title { font-size: .72rem; letter-spacing: .07em; text-transform: uppercase;
  color: #64748b; margin: 0 0 8px; font-weight: 700; }
.src-card { display: flex; gap: 10px; border: 1px solid #e2e8f0; border-radius: 8px;
  padding: 10px 12px; margin-bottom: 10px; background: #fbfcfd; scroll-margin-top: 12px;
  transition: box-shadow .3s, border-color .3s; }
.src-card:target { border-color: #3b82f6; box-shadow: 0 0 0 3px rgba(59,130,246,.18); }
.src-card.near { background: #fff; }
.src-num { flex: none; width: 22px; height: 22px; border-radius: 50%; background: #1d4ed8;
  color: #fff; font-size: .76rem; font-weight: 700; display: flex; align-items: center;
  justify-content: center; margin-top: 1px; }
.src-body { min-width: 0; flex: 1; display: flex; flex-direction: column; }
.src-title { font-weight: 620; color: #0f172a; font-size: .93rem; line-height: 1.35; }
.src-title a { color: #0f172a; text-decoration: none; }
.src-card a, .answer-text a:not(sup.cite a) { padding: 0 !important; }  /* gradio pads links */
.src-title a:hover { color: #1d4ed8; text-decoration: underline; }
.src-title .ext { color: #64748b; font-size: .8em; margin-left: 3px; }
.badge { display: inline-block; margin-left: 6px; font-size: .68rem; font-weight: 600;
  color: #6d28d9; background: #ede9fe; border-radius: 4px; padding: 1px 5px;
  vertical-align: 1px; white-space: nowrap; }
.src-meta { color: #64748b; font-size: .8rem; margin-top: 2px; }
.src-abstract { font-size: .85rem; color: #475569; line-height: 1.5; margin: 6px 0 2px;
  overflow-wrap: anywhere; }
.src-card mark { background: #fef08a; color: #1e293b; padding: 0 1px; border-radius: 2px; }
/* "Whole abstract" comes before the abstract in the page, so that opening it can show the
   hidden parts (~), and is drawn after it */
.src-card details.whole { order: 1; }
.src-card details summary { cursor: pointer; color: #2563eb; font-size: .78rem; }
.src-abstract .more { display: none; }
.whole[open] ~ .src-abstract .more { display: inline; }
.whole[open] ~ .src-abstract .gap { display: none; }
.src-meta a.find { color: #2563eb; text-decoration: none; white-space: nowrap; }
.src-meta a.find:hover { text-decoration: underline; }
.related-btn { align-self: flex-start; width: auto; margin-top: 6px; padding: 1px 8px;
  font-size: .75rem; color: #2563eb;
  background: #fff; border: 1px solid #bfdbfe; border-radius: 999px; cursor: pointer; }
.related-btn:hover { background: #eff6ff; }
.answer-text details.list-page summary { cursor: pointer; color: #2563eb; font-size: .85rem; }
.src-meta .ext { font-size: .85em; margin-left: 2px; }
.muted { color: #94a3b8; font-size: .88rem; }

#composer { align-items: center; background: #fff; border: 1px solid #cbd5e1;
  border-radius: 10px; padding: 6px 6px 6px 4px; gap: 6px; }
#composer textarea { font-size: 1rem; border: none !important; box-shadow: none !important; }
#ask { align-self: stretch; }
#controls { background: #fff; border: 1px solid #e2e8f0; border-radius: 10px; padding: 4px; }
.ingest-results { width: 100%; border-collapse: collapse; font-size: .9rem; margin-top: 6px;
  background: #fff; border: 1px solid #e2e8f0 !important; border-radius: 8px; }
.ingest-results tr, .ingest-results th, .ingest-results td { border: none !important; }
.ingest-results th { text-align: left; color: #64748b; font-weight: 600; font-size: .78rem;
  text-transform: uppercase; letter-spacing: .05em; border-bottom: 1px solid #e2e8f0;
  padding: 6px 8px; }
.ingest-results td { padding: 8px; border-top: 1px solid #f1f5f9 !important;
  vertical-align: top; }
#library, #library * { font-family: var(--font) !important; }
#library td { font-size: .88rem; }
#library th, #library th * { white-space: nowrap; word-break: keep-all; }
.section-title h3, #library-count h3 { margin: 6px 0 0; font-size: 1rem; color: #0f172a; }
#new-chat { background: #fff; border: 1px solid #cbd5e1; }
.ingest-results td.file { font-family: ui-monospace, monospace; font-size: .85rem;
  white-space: nowrap; }
.ingest-results tr.failed td { color: #991b1b; }
.ingest-results ul.skipped { margin: 4px 0 0; padding-left: 18px; color: #92400e;
  font-size: .82rem; }
footer { opacity: .7; }
"""
