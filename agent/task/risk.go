package task

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/tabrelay/tabrelay/agent/outline"
)

// The classifier's vocabulary. Each category is a list of words and phrases in English,
// German, French, Spanish, Japanese and Chinese; Latin-script entries match as whole words
// (any letter or digit next to them breaks the match: "Posts" is not "post"), CJK entries
// match anywhere (those scripts have no spaces between words).
type riskCategory struct {
	reason string
	latin  []string
	cjk    []string
}

// actionCategories name controls whose activation is irreversible or consequential: clicking
// them (or Enter in their form) always asks.
var actionCategories = []riskCategory{
	{"purchase or payment", []string{
		"buy", "buy now", "purchase", "pay", "pay now", "payment", "checkout", "check out", "place order", "place your order",
		"order now", "complete order", "complete purchase", "confirm order", "confirm purchase", "confirm payment",
		"book now", "reserve", "donate", "subscribe",
		"kaufen", "jetzt kaufen", "bestellen", "jetzt bestellen", "zahlungspflichtig bestellen", "bezahlen", "zahlen", "kaufabschluss",
		"acheter", "payer", "commander", "passer la commande", "valider la commande", "régler",
		"comprar", "pagar", "realizar pedido", "hacer pedido", "finalizar compra", "tramitar pedido",
	}, []string{"購入", "注文", "支払", "決済", "购买", "支付", "付款", "下单", "结账", "結帳"}},
	{"sending", []string{
		"send", "send money", "transfer", "wire", "wire money", "confirm transfer",
		"senden", "absenden", "überweisen", "überweisung",
		"envoyer", "virement", "transférer",
		"enviar", "transferir", "transferencia",
	}, []string{"送信", "送金", "振込", "振り込", "发送", "转账", "汇款"}},
	{"deletion", []string{
		"delete", "remove", "erase", "destroy", "close account", "deactivate", "unsubscribe", "wipe",
		"löschen", "entfernen", "konto schließen",
		"supprimer", "effacer",
		"eliminar", "borrar", "suprimir",
	}, []string{"削除", "消去", "退会", "删除", "移除", "注销"}},
	{"publishing", []string{
		"publish", "post", "tweet", "share", "deploy", "release to production", "go live", "merge",
		"veröffentlichen", "posten", "bereitstellen",
		"publier", "déployer",
		"publicar", "desplegar",
	}, []string{"公開", "投稿", "デプロイ", "发布", "发表", "部署"}},
	{"approval or authorization", []string{
		"approve", "authorize", "authorise", "grant access", "allow access", "sign and",
		"genehmigen", "autorisieren", "freigeben",
		"autoriser", "approuver",
		"autorizar", "aprobar",
	}, []string{"承認", "授权", "批准"}},
	{"submitting data", []string{
		"submit", "soumettre", "einreichen",
	}, []string{"提交", "送出"}},
}

// proceedLabels are generic "go on" labels: harmless alone, but they carry out whatever the
// page around them proposes, so in a risky context (see contextCategories) they ask too.
var proceedLabels = []string{
	"continue", "next", "proceed", "ok", "okay", "yes", "accept", "agree", "i agree", "done", "finish", "complete", "confirm",
	"i understand", "got it", "continue to payment",
	"weiter", "fortfahren", "ja", "akzeptieren", "fertig", "abschließen", "bestätigen",
	"continuer", "suivant", "valider", "oui", "accepter", "terminer", "confirmer",
	"continuar", "siguiente", "aceptar", "sí", "listo", "finalizar", "confirmar",
	"続ける", "次へ", "確認", "確定", "はい", "同意", "完了", "继续", "下一步", "确定", "确认", "是", "完成",
}

// contextCategories are what the page's own words around a control may say: the action
// categories, amounts of money and warnings that a step cannot be undone.
var contextCategories = append(append([]riskCategory(nil), actionCategories[:4]...),
	riskCategory{"purchase or payment", []string{"order", "checkout", "card", "amount", "total", "price",
		"bestellung", "gesamt", "betrag", "commande", "montant", "pedido", "importe", "tarjeta"}, []string{"金額", "合計", "金额", "总计", "订单"}},
	riskCategory{"deletion", []string{"cannot be undone", "can't be undone", "can not be undone", "irreversible", "permanently",
		"unwiderruflich", "endgültig", "kann nicht rückgängig gemacht werden", "irréversible", "définitivement",
		"irreversible", "definitivamente", "no se puede deshacer"}, []string{"元に戻せません", "取り消せません", "无法撤销", "不可撤销", "无法恢复"}},
)

// confirmPhrases in a confirm() or prompt() message ask before OK is pressed, as do the
// context categories: a page asks "Are you sure?" only before something that matters.
var confirmPhrases = riskCategory{"confirming an irreversible step", []string{"are you sure", "cannot be undone", "can't be undone",
	"irreversible", "permanently", "sind sie sicher", "êtes-vous sûr", "êtes-vous sûre", "estás seguro", "está seguro", "¿está seguro"},
	[]string{"よろしいですか", "本当に", "确定要", "确定吗", "是否确定"}}

// amountRe finds an amount of money: "$500", "€ 39,00", "39.00 EUR", "500 USD", "¥1,000", "1000円".
var amountRe = regexp.MustCompile(`(?i)(?:[$€£¥₹]\s?\d|\d[\d.,' ]*\s?(?:€|\$|£|¥|₹|円|元|\b(?:usd|eur|gbp|chf|jpy|cny|cad|aud|dollars?|euros?)\b))`)

// compiled builds one regexp per category: Latin words between non-letters, CJK anywhere.
func (c riskCategory) compile() *regexp.Regexp {
	var alts []string
	if len(c.latin) > 0 {
		ws := make([]string, len(c.latin))
		for i, w := range c.latin {
			ws[i] = strings.ReplaceAll(regexp.QuoteMeta(w), " ", `\s+`)
		}
		alts = append(alts, `(?:^|[^\p{L}\p{N}])(`+strings.Join(ws, "|")+`)(?:$|[^\p{L}\p{N}])`)
	}
	if len(c.cjk) > 0 {
		ws := make([]string, len(c.cjk))
		for i, w := range c.cjk {
			ws[i] = regexp.QuoteMeta(w)
		}
		alts = append(alts, "("+strings.Join(ws, "|")+")")
	}
	return regexp.MustCompile(`(?i)` + strings.Join(alts, "|"))
}

// vocabulary is the compiled vocabulary, built once (read-only afterwards).
type vocabulary struct {
	action  []compiledCategory
	context []compiledCategory
	proceed *regexp.Regexp // a whole label: the proceed word, then at most a short tail
	confirm *regexp.Regexp
}

type compiledCategory struct {
	reason string
	re     *regexp.Regexp
}

var vocab = func() vocabulary {
	ws := make([]string, len(proceedLabels))
	for i, w := range proceedLabels {
		ws[i] = strings.ReplaceAll(regexp.QuoteMeta(w), " ", `\s+`)
	}
	v := vocabulary{confirm: confirmPhrases.compile(),
		proceed: regexp.MustCompile(`(?i)^(?:` + strings.Join(ws, "|") + `)(?:[\s,!.:;–—-]+.{0,30})?$`)}
	for _, c := range actionCategories {
		v.action = append(v.action, compiledCategory{c.reason, c.compile()})
	}
	for _, c := range contextCategories {
		v.context = append(v.context, compiledCategory{c.reason, c.compile()})
	}
	return v
}()

// firstMatch returns the matched word of re in s ("" if none).
func firstMatch(re *regexp.Regexp, s string) string {
	m := re.FindStringSubmatch(s)
	if m == nil {
		return ""
	}
	for _, g := range m[1:] {
		if g != "" {
			return g
		}
	}
	return strings.TrimSpace(m[0])
}

// actionRisk reports the category of a control's name that makes activating it consequential
// ("" if none) and the words that matched.
func actionRisk(name string) (reason, word string) {
	for _, c := range vocab.action {
		if w := firstMatch(c.re, name); w != "" {
			return c.reason, w
		}
	}
	return "", ""
}

// isProceed reports whether a control's name is a generic "go on" label (Continue, OK, Weiter,
// 次へ…), alone or with a short tail ("Continue →", "OK, got it", "Next: shipping").
func isProceed(name string) bool {
	n := strings.TrimFunc(name, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	return n != "" && vocab.proceed.MatchString(n)
}

// textRisk reports what in page text (a form's or dialog's words) makes a step in it risky:
// the category and the words.
func textRisk(text string) (reason, word string) {
	for _, c := range vocab.context {
		if w := firstMatch(c.re, text); w != "" {
			return c.reason, w
		}
	}
	if m := amountRe.FindString(text); m != "" {
		return "purchase or payment", strings.TrimSpace(m)
	}
	return "", ""
}

// contextWindow is how many outline lines before and after a control are read as its
// surroundings when it sits in no form or dialog.
const contextBefore, contextAfter = 12, 3

// surroundings returns the nodes that make up a control's context and what they are: the
// enclosing form, dialog or alertdialog (the outline keeps them), else the nearby lines of the
// outline (unnamed wrappers are flattened away, so nesting alone says little there).
func surroundings(page []outline.Node, idx int) ([]outline.Node, string) {
	for p := page[idx].Parent; p >= 0; p = page[p].Parent {
		switch page[p].Role {
		case "form", "dialog", "alertdialog":
			what := page[p].Role
			if what == "alertdialog" {
				what = "dialog"
			}
			return append([]outline.Node{page[p]}, subtree(page, p)...), what
		}
	}
	lo, hi := max(0, idx-contextBefore), min(len(page), idx+contextAfter+1)
	return page[lo:hi], "page"
}

// contextRisk judges a generic control (Continue, OK…) by the words around it: the page text
// of its surroundings (names and values, not links' URLs, not the control itself). It returns
// a verdict whose Detail quotes the words that made it risky.
func contextRisk(page []outline.Node, el outline.Node) Verdict {
	idx := indexOf(page, el)
	if idx < 0 {
		return Verdict{}
	}
	nodes, what := surroundings(page, idx)
	for _, n := range nodes {
		if n.Ref == el.Ref && n.Ref != "" || strings.HasPrefix(n.Role, "/") || isControl(n.Role) {
			continue // the page's words, not other controls' (a "Share" link beside "Next")
		}
		text := strings.TrimSpace(n.Name + " " + n.Value)
		if n.Role == "text" && n.Value != "" {
			text = strings.TrimSpace(strings.TrimPrefix(n.Value, "text:"))
		}
		if text == "" {
			continue
		}
		if reason, word := textRisk(text); reason != "" {
			return Verdict{Confirm: true, Reason: reason,
				Detail: fmt.Sprintf("the %s around it says %q (%q)", what, truncate(oneLine(text), 80), word)}
		}
	}
	return Verdict{}
}

// isControl reports whether role is a control that does something when activated.
func isControl(role string) bool {
	switch role {
	case "button", "link", "menuitem", "menuitemcheckbox", "menuitemradio", "tab", "option", "treeitem":
		return true
	}
	return false
}

// indexOf returns the index of el in page (by ref), -1 if absent.
func indexOf(page []outline.Node, el outline.Node) int {
	if el.Ref == "" {
		return -1
	}
	for i := range page {
		if page[i].Ref == el.Ref {
			return i
		}
	}
	return -1
}

// minSecret is the shortest value that counts as a secret the user gave: shorter ones ("a",
// "12") occur in any goal by chance.
const minSecret = 4

// suppliedSecret reports whether a secret typed into a password or payment field is a value
// the user gave in the goal: the whole value, as a word of its own (between spaces, quotes,
// brackets or sentence punctuation), never a part of a longer word ("pass" is not supplied by
// "my password is hunter2"), and at least minSecret characters long.
func suppliedSecret(value, goal string) bool {
	v := strings.TrimSpace(value)
	if utf8.RuneCountInString(v) < minSecret {
		return false
	}
	for from := 0; from <= len(goal); {
		i := strings.Index(goal[from:], v)
		if i < 0 {
			return false
		}
		start, end := from+i, from+i+len(v)
		if leftBoundary(goal[:start]) && rightBoundary(goal[end:]) {
			return true
		}
		_, size := utf8.DecodeRuneInString(goal[start:])
		from = start + size
	}
	return false
}

// leftBoundary reports whether before (the goal up to a value) ends where a word may start.
func leftBoundary(before string) bool {
	if before == "" {
		return true
	}
	r, _ := utf8.DecodeLastRuneInString(before)
	return separator(r) || r == ':'
}

// rightBoundary reports whether after (the goal after a value) starts where a word may end:
// "." and ":" only at the end of a sentence, so "hunter2" is not supplied by "hunter2.com".
func rightBoundary(after string) bool {
	if after == "" {
		return true
	}
	r, size := utf8.DecodeRuneInString(after)
	if r == '.' || r == ':' {
		next, _ := utf8.DecodeRuneInString(after[size:])
		return size == len(after) || unicode.IsSpace(next)
	}
	return separator(r)
}

func separator(r rune) bool {
	return unicode.IsSpace(r) || unicode.In(r, unicode.Quotation_Mark, unicode.Ps, unicode.Pe, unicode.Pi, unicode.Pf) ||
		strings.ContainsRune(",;!?`", r)
}
