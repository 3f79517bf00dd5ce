// html_assets.h — the HTML report's style sheet and script (report.css,
// report.js), written beside its pages (reconstruct/html_writer.h).
#ifndef BALLARUS_RECONSTRUCT_HTML_ASSETS_H_
#define BALLARUS_RECONSTRUCT_HTML_ASSETS_H_

namespace ballarus {

inline constexpr const char* kReportCss = R"(body{font-family:sans-serif;margin:1.5em;color:#222}
h1{font-size:1.4em}h2{font-size:1.15em;margin-top:1.6em}
table{border-collapse:collapse;margin:.4em 0}
th,td{padding:2px 8px;border-bottom:1px solid #ddd;text-align:right}
th{background:#eef;cursor:pointer;user-select:none}
td.l,th.l{text-align:left}
.hi{background:#cfc}.mid{background:#ffc}.lo{background:#fcc}
.bar{display:block;height:100%;background:#6a6}
.barbg{display:inline-block;width:60px;height:.7em;background:#e66;vertical-align:middle}
table.src{font-family:monospace;font-size:13px;border:none}
table.src td{border:none;padding:0 6px;white-space:pre;vertical-align:top}
table.src td.ln{color:#888;text-align:right}
table.src td.code{text-align:left}
table.src td.cnt{text-align:right;min-width:5em}
table.src tr.hit td.cnt{background:#cfc}
table.src tr.miss td.cnt,table.src tr.miss td.code{background:#fdd}
table.src tr.onpath td.code{background:#fe9;outline:1px solid #e90}
td.br span{display:inline-block;min-width:1.2em;margin-right:2px;font-size:11px}
.bt{color:#070}.bn{color:#c00}.bx{color:#999}
button.path{display:block;font-family:monospace;font-size:12px;margin:1px;text-align:left}
[hidden]{display:none!important}
button.path.on{background:#fe9}
.svg{overflow:auto;border:1px solid #ccc;max-height:700px}
.note{color:#666;font-size:.9em}
code{font-family:monospace}
)";

inline constexpr const char* kReportJs = R"(// report.js: sortable tables, hot path highlighting.
function sortTable(th){
  var table=th.closest('table'),tb=table.tBodies[0],i=th.cellIndex;
  var dir=th.dataset.dir==='desc'?'asc':'desc';
  for(var h of table.tHead.rows[0].cells)delete h.dataset.dir;
  th.dataset.dir=dir;
  var rows=Array.from(tb.rows);
  rows.sort(function(a,b){
    var x=a.cells[i].dataset.v,y=b.cells[i].dataset.v,c;
    if(x!==undefined&&y!==undefined)c=parseFloat(x)-parseFloat(y);
    else c=a.cells[i].textContent.localeCompare(b.cells[i].textContent);
    return dir==='asc'?c:-c;});
  for(var r of rows)tb.appendChild(r);
}
function showPath(id,scroll){
  document.querySelectorAll('tr.onpath').forEach(function(r){r.classList.remove('onpath');});
  document.querySelectorAll('button.path.on').forEach(function(b){b.classList.remove('on');});
  var b=document.getElementById(id);if(!b)return;
  b.classList.add('on');
  var first=null;
  b.dataset.lines.split(' ').forEach(function(n){
    var r=document.getElementById('L'+n);
    if(r){r.classList.add('onpath');if(!first)first=r;}});
  if(first&&scroll)first.scrollIntoView({block:'center'});
}
document.addEventListener('DOMContentLoaded',function(){
  document.querySelectorAll('table.sortable th').forEach(function(th){
    th.addEventListener('click',function(){sortTable(th);});});
  document.querySelectorAll('button.path').forEach(function(b){
    b.addEventListener('click',function(){history.replaceState(null,'','#'+b.id);showPath(b.id,true);});});
  if(location.hash.length>1)showPath(location.hash.substring(1),false);
});
)";

// Appended to report.css when the profile has named runs (html_tests.h).
inline constexpr const char* kTestsCss = R"(table.src td.tests{white-space:normal;text-align:left;font-size:11px}
details.tests summary{cursor:pointer;color:#036}
details.tests div{white-space:normal;font-size:11px}
)";

}  // namespace ballarus

#endif  // BALLARUS_RECONSTRUCT_HTML_ASSETS_H_
