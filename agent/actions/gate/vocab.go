package gate

import (
	"github.com/tabrelay/tabrelay/snapshot/describe"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// Level is how grave a risky step is: what kind of approval may let it run.
type Level int

const (
	// None is a step with no risk.
	None Level = iota
	// Ordinary is a step whose effect the user's own words can approve: submitting a form,
	// running a script, a generic "go on".
	Ordinary
	// Grave is a step only a person's answer to this very step approves: money, deletion,
	// sending to others, publishing, account changes, secrets and files leaving the machine.
	Grave
)

// String names the level.
func (l Level) String() string {
	switch l {
	case None:
		return "none"
	case Ordinary:
		return "ordinary"
	case Grave:
		return "grave"
	}
	return "level?"
}

// category is one kind of consequential step and its words (see [words]): whole words
// match between non-letters after folding ("Posts" is not "post"), stems anywhere.
type category struct {
	reason string
	level  Level
	words
}

// Reasons the gate gives, one per category.
const (
	ReasonPayment    = "purchase or payment"
	ReasonSending    = "sending"
	ReasonDeletion   = "deletion"
	ReasonPublishing = "publishing"
	ReasonAccount    = "account or access change"
	ReasonSubmit     = "submitting data"
	ReasonPassword   = "password field"
	ReasonPayField   = "payment or identity field"
	ReasonUpload     = "uploading a file"
	ReasonScript     = "running a script in the page"
	ReasonConfirm    = "confirming an irreversible step"
	// ReasonKey is a key the page, not the browser, gives a meaning to (a site's shortcut,
	// Enter or Space with nothing focused, typed text that moves the focus with Tab).
	ReasonKey = "a key the page may act on"
	// ReasonUnnamed is a commit control or drop zone with no name the gate can read.
	ReasonUnnamed = "a control with no readable name"
	// ReasonSensitivePage is a commit on an account, security, billing or consent page.
	ReasonSensitivePage = "a change on an account, security, billing or consent page"
)

// actionCategories name controls whose activation is irreversible or consequential.
var actionCategories = []category{
	{ReasonPayment, Grave, paymentWords},
	{ReasonSending, Grave, sendingWords},
	{ReasonDeletion, Grave, deletionWords},
	{ReasonPublishing, Grave, publishingWords},
	{ReasonAccount, Grave, accountWords},
	{ReasonSubmit, Ordinary, submitWords},
}

// proceedLabels are generic "go on" labels: harmless alone, but they carry out whatever the
// page around them proposes, so in a risky context (see contextCategories) they ask too.
var proceedLabels = []string{
	"continue", "next", "proceed", "ok", "okay", "yes", "accept", "agree", "i agree", "done", "finish", "complete", "confirm",
	"i understand", "got it", "continue to payment", "apply",
	"weiter", "fortfahren", "ja", "akzeptieren", "fertig", "abschließen", "bestätigen", "anwenden",
	"continuer", "suivant", "valider", "oui", "accepter", "terminer", "confirmer", "appliquer",
	"continuar", "siguiente", "aceptar", "sí", "listo", "finalizar", "confirmar", "aplicar",
	"続ける", "次へ", "確認", "確定", "はい", "同意", "完了", "继续", "下一步", "确定", "确认", "是", "完成",
}

// contextCategories are what the page's own words around a control may say: the action
// categories, amounts of money and warnings that a step cannot be undone.
var contextCategories = append(append([]category(nil), actionCategories[:5]...),
	category{ReasonPayment, Grave, words{[]string{"order", "checkout", "card number", "credit card", "debit card", "your card", "amount", "total", "price", "subscription", "billing",
		"bestellung", "gesamt", "betrag", "abonnement", "commande", "montant", "pedido", "importe", "tarjeta", "suscripción",
		"ordine", "totale", "importo", "encomenda", "bestelling", "totaal", "bedrag", "zamówienie", "suma", "kwota", "заказ", "итого", "сумма",
		"замовлення", "сума", "sipariş", "toplam", "tutar", "đơn hàng", "tổng", "pesanan", "jumlah"},
		[]string{"金額", "合計", "金额", "总计", "订单", "訂單", "總計", "금액", "합계", "주문", "المبلغ", "الإجمالي", "कुल"}}},
	category{ReasonDeletion, Grave, words{[]string{"cannot be undone", "can't be undone", "can not be undone", "irreversible", "permanently", "permanent",
		"unwiderruflich", "endgültig", "kann nicht rückgängig gemacht werden", "irréversible", "définitivement",
		"definitivamente", "no se puede deshacer", "permanentemente", "irreversibile", "non può essere annullata", "não pode ser desfeita",
		"permanent", "onomkeerbaar", "kan niet ongedaan", "trwale", "nieodwracalne", "безвозвратно", "необратимо", "назавжди", "безповоротно",
		"kalıcı olarak", "geri alınamaz", "vĩnh viễn", "không thể hoàn tác", "permanen", "tidak dapat dibatalkan"},
		[]string{"元に戻せません", "取り消せません", "完全に", "无法撤销", "不可撤销", "无法恢复", "永久", "無法復原", "되돌릴 수 없", "영구", "نهائي", "स्थायी"}}},
)

// confirmPhrases in a confirm() or prompt() message ask before OK is pressed.
var confirmPhrases = category{ReasonConfirm, Grave, words{[]string{"are you sure", "cannot be undone", "can't be undone",
	"irreversible", "permanently", "sind sie sicher", "êtes-vous sûr", "êtes-vous sûre", "estás seguro", "está seguro",
	"sei sicuro", "tem certeza", "weet je het zeker", "czy na pewno", "вы уверены", "ви впевнені", "emin misiniz", "bạn có chắc", "apakah anda yakin"},
	[]string{"よろしいですか", "本当に", "确定要", "确定吗", "是否确定", "確定要", "確定嗎", "하시겠습니까", "هل أنت متأكد", "क्या आप वाकई"}}}

// amountRe finds an amount of money: "$500", "€ 39,00", "39.00 EUR", "500 USD", "¥1,000", "1000円".
var amountRe = regexp.MustCompile(`(?i)(?:[$€£¥₹]\s?\d|\d[\d.,' ]*\s?(?:€|\$|£|¥|₹|円|元|\b(?:usd|eur|gbp|chf|jpy|cny|cad|aud|dollars?|euros?)\b))`)

// phraseGap joins the words of a phrase: a space, or a possessive or article between them, so
// "close account" holds "close my account" and "cancel the subscription" (the words of a
// phrase are a verb and its object; what stands between them does not change the step).
const phraseGap = `\s+(?:(?:my|your|our|the|this|that|all|his|her|their|mein|meine|meinen|dein|deinen|ihr|ihren|das|den|die|mon|ma|mes|votre|vos|le|la|les|mi|mis|tu|su|el|il|lo|mio|mia|meu|minha)\s+)?`

// compile builds one regexp per category: Latin words between non-letters, CJK anywhere.
func (c category) compile() *regexp.Regexp {
	var alts []string
	if len(c.word) > 0 {
		ws := make([]string, len(c.word))
		for i, w := range c.word {
			ws[i] = strings.ReplaceAll(regexp.QuoteMeta(Fold(w)), " ", phraseGap)
		}
		alts = append(alts, `(?:^|[^\p{L}\p{N}])(`+strings.Join(ws, "|")+`)(?:$|[^\p{L}\p{N}])`)
	}
	if len(c.anywhere) > 0 {
		ws := make([]string, len(c.anywhere))
		for i, w := range c.anywhere {
			ws[i] = regexp.QuoteMeta(Fold(w))
		}
		alts = append(alts, "("+strings.Join(ws, "|")+")")
	}
	return regexp.MustCompile(strings.Join(alts, "|"))
}

type compiled struct {
	reason string
	level  Level
	re     *regexp.Regexp
}

// vocabulary is the compiled vocabulary (read-only after it is built).
type vocabulary struct {
	action    []compiled
	context   []compiled
	proceed   *regexp.Regexp // a whole label: the proceed word, then at most a short tail
	dismiss   *regexp.Regexp // a whole label that closes or leaves
	confirm   *regexp.Regexp
	takeover  *regexp.Regexp
	sensitive *regexp.Regexp
	message   *regexp.Regexp
	// visibility are the words of a choice that opens something to everyone (a form's
	// chosen value or checked box: Public, Anyone with the link).
	visibility *regexp.Regexp
	compounds  []compound
	levels     map[string]Level // each action category's level by reason
	// scripts are the writing systems the action words are written in: a label in any
	// other (Greek, Hebrew, Thai, Bengali…) is one the gate cannot read.
	scripts []*unicode.RangeTable
}

// compound is a folded compound stem (see compoundStems).
type compound struct {
	stem, reason string
	except       []string
}

func buildVocabulary() *vocabulary {
	ws := make([]string, len(proceedLabels))
	for i, w := range proceedLabels {
		ws[i] = strings.ReplaceAll(regexp.QuoteMeta(Fold(w)), " ", `\s+`)
	}
	ds := make([]string, len(dismissLabels))
	for i, w := range dismissLabels {
		ds[i] = strings.ReplaceAll(regexp.QuoteMeta(Fold(w)), " ", `\s+`)
	}
	v := &vocabulary{confirm: confirmPhrases.compile(),
		proceed:    regexp.MustCompile(`(?i)^(?:` + strings.Join(ws, "|") + `)(?:[\s,!.:;–—>→-]+.{0,30})?$`),
		dismiss:    regexp.MustCompile(`(?i)^(?:` + strings.Join(ds, "|") + `)$`),
		takeover:   category{ReasonAccount, Grave, takeoverWords}.compile(),
		sensitive:  category{ReasonSensitivePage, Ordinary, sensitiveWords}.compile(),
		message:    category{ReasonSending, Grave, messageWords}.compile(),
		visibility: category{ReasonPublishing, Grave, visibilityWords}.compile(),
		levels:     map[string]Level{},
	}
	for _, c := range actionCategories {
		v.action = append(v.action, compiled{c.reason, c.level, c.compile()})
		v.levels[c.reason] = c.level
		for _, w := range append(append([]string(nil), c.word...), c.anywhere...) {
			for _, r := range Fold(w) {
				if t := scriptOf(r); t != nil && !slices.Contains(v.scripts, t) {
					v.scripts = append(v.scripts, t)
				}
			}
		}
	}
	for _, c := range compoundStems {
		cp := compound{stem: Fold(c.stem), reason: c.reason}
		for _, e := range c.except {
			cp.except = append(cp.except, Fold(e))
		}
		v.compounds = append(v.compounds, cp)
	}
	for _, c := range contextCategories {
		v.context = append(v.context, compiled{c.reason, c.level, c.compile()})
	}
	return v
}

// scriptOf is the writing system of letter r (nil for what is not a letter, or is common to
// all scripts).
func scriptOf(r rune) *unicode.RangeTable {
	if !unicode.IsLetter(r) {
		return nil
	}
	for name, t := range unicode.Scripts {
		if name != "Common" && name != "Inherited" && unicode.Is(t, r) {
			return t
		}
	}
	return nil
}

// unreadable returns the first letter of label (folded) in a script the action words are not
// written in ("" when the gate reads every letter's script): the gate cannot tell what such
// a control does.
func (v *vocabulary) unreadable(label string) string {
	for _, r := range label {
		if t := scriptOf(r); t != nil && !slices.Contains(v.scripts, t) {
			return string(r)
		}
	}
	return ""
}

// firstMatch returns the matched word of re in s ("" if none).
func firstMatch(re *regexp.Regexp, s string) string {
	if s == "" || !re.MatchString(s) { // cheaper than finding the submatch, and most texts have none
		return ""
	}
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

// hit is what made a text risky: its category, level and the words.
type hit struct {
	reason string
	level  Level
	word   string
}

// actionHit judges a control's label (already folded): the category its words name. With
// money, an amount in a short label ("$500", "39,00 €") is a purchase too (a button's, not a
// product link's).
func (v *vocabulary) actionHit(label string, money bool) hit {
	var best hit
	for _, c := range v.action {
		if w := firstMatch(c.re, label); w != "" && c.level > best.level {
			best = hit{c.reason, c.level, w}
		}
	}
	if best.level < Grave {
		if h := v.compoundHit(label); h.level > best.level {
			best = h
		}
	}
	if best.level < Grave {
		if h := v.emojiHit(label); h.level > best.level {
			best = h
		}
	}
	if best.level < Grave && money && len([]rune(label)) <= 40 {
		if m := amountRe.FindString(label); m != "" {
			return hit{ReasonPayment, Grave, strings.TrimSpace(m)}
		}
	}
	return best
}

// compoundHit finds a word ending in a compound stem ("kontolöschen", "nukopen").
func (v *vocabulary) compoundHit(label string) hit {
	for _, w := range strings.FieldsFunc(label, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsMark(r) }) {
		for _, c := range v.compounds {
			if !strings.HasSuffix(w, c.stem) || w == c.stem {
				continue
			}
			harmless := false
			for _, e := range c.except {
				harmless = harmless || strings.HasSuffix(w, e)
			}
			if !harmless {
				return hit{c.reason, v.levels[c.reason], w}
			}
		}
	}
	return hit{}
}

// emojiHit finds a pictograph that names a category (🗑, 💳, …).
func (v *vocabulary) emojiHit(label string) hit {
	for _, r := range label {
		if reason, ok := emoji[r]; ok {
			return hit{reason, v.levels[reason], string(r)}
		}
	}
	return hit{}
}

// iconHit judges the names an icon or a data-* attribute carries ("fa-trash-can",
// "delete-file", "transferOwnership"): their words, split at case changes and punctuation,
// by the grave action categories and the icon words. An ordinary word there ("submit" in a
// test id) says nothing about the control's effect.
func (v *vocabulary) iconHit(name string) hit {
	toks := iconTokens(name)
	if len(toks) == 0 {
		return hit{}
	}
	for i := range toks {
		if r, ok := iconWords[toks[i]]; ok {
			return hit{r, v.levels[r], toks[i]}
		}
		if i+1 < len(toks) {
			if r, ok := iconWords[toks[i]+"-"+toks[i+1]]; ok {
				return hit{r, v.levels[r], toks[i] + "-" + toks[i+1]}
			}
		}
	}
	if h := v.actionHit(strings.Join(toks, " "), false); h.level == Grave {
		return h
	}
	if w := firstMatch(v.confirm, strings.Join(toks, " ")); w != "" {
		return hit{ReasonConfirm, Grave, w}
	}
	return hit{}
}

// iconTokens splits an icon's or attribute's name into folded words (describe.Tokens):
// "fa-trash-can" is [fa trash can], "deleteFile" is [delete file].
func iconTokens(name string) []string {
	toks := describe.Tokens(name)
	out := toks[:0]
	for _, t := range toks {
		if f := Fold(t); f != "" {
			out = append(out, strings.Fields(f)...)
		}
	}
	return out
}

// takeoverHit reports the words in folded text that make a commit an account takeover.
func (v *vocabulary) takeoverHit(text string) string { return firstMatch(v.takeover, text) }

// sensitiveHit reports the words in folded text that name an account, security, billing or
// consent page.
func (v *vocabulary) sensitiveHit(text string) string { return firstMatch(v.sensitive, text) }

// messageHit reports the words in a field's folded names that make it a message box.
func (v *vocabulary) messageHit(text string) string { return firstMatch(v.message, text) }

// isDismiss reports whether a folded label only closes or leaves (Cancel, Close, No, ×).
func (v *vocabulary) isDismiss(label string) bool {
	n := strings.TrimSpace(label)
	return n != "" && v.dismiss.MatchString(n)
}

// contextHit judges page text around a control (folded).
func (v *vocabulary) contextHit(text string) hit {
	for _, c := range v.context {
		if w := firstMatch(c.re, text); w != "" {
			return hit{c.reason, c.level, w}
		}
	}
	if m := amountRe.FindString(text); m != "" {
		return hit{ReasonPayment, Grave, strings.TrimSpace(m)}
	}
	return hit{}
}

// isProceed reports whether a folded label is a generic "go on" label (Continue, OK, Weiter,
// 次へ…), alone or with a short tail ("Continue →", "OK, got it", "Next: shipping").
func (v *vocabulary) isProceed(label string) bool {
	n := strings.TrimFunc(label, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	return n != "" && v.proceed.MatchString(n)
}

// Fold prepares text for matching as a person reads it: Unicode NFKC (full-width Ｂｕｙ is
// Buy, ligatures split), invisible characters removed (zero-width spaces and joiners, soft
// hyphens, bidi marks, variation selectors), letters that look like Latin ones (Cyrillic е,
// Greek ο…) mapped to them, whitespace collapsed and everything lower-cased.
func Fold(s string) string {
	s = norm.NFKC.String(s)
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for _, r := range s {
		if invisible(r) {
			continue
		}
		if l, ok := confusables[r]; ok {
			r = l
		}
		if unicode.IsSpace(r) {
			if !space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = true
			continue
		}
		space = false
		b.WriteRune(unicode.ToLower(r))
	}
	return strings.TrimRight(b.String(), " ")
}

// invisible reports whether r draws nothing a reader would see between letters.
func invisible(r rune) bool {
	switch {
	case r == 0x00AD, r == 0x034F, r == 0x061C, r == 0x115F, r == 0x1160, r == 0x17B4, r == 0x17B5, r == 0x180E,
		r >= 0x200B && r <= 0x200F, r >= 0x202A && r <= 0x202E, r >= 0x2060 && r <= 0x206F, r == 0x3164, r == 0xFEFF,
		r == 0xFFA0, r >= 0xFE00 && r <= 0xFE0F, r >= 0xE0000 && r <= 0xE0FFF, r >= 0x1D173 && r <= 0x1D17A:
		return true
	}
	return unicode.Is(unicode.Cf, r)
}

// confusables map letters of other scripts that look like Latin letters to those letters
// (after NFKC, so full-width and mathematical letters are already Latin).
var confusables = map[rune]rune{
	// Cyrillic
	'а': 'a', 'в': 'b', 'е': 'e', 'ё': 'e', 'к': 'k', 'м': 'm', 'н': 'h', 'о': 'o', 'р': 'p', 'с': 'c', 'т': 't', 'у': 'y', 'х': 'x',
	'ѕ': 's', 'і': 'i', 'ї': 'i', 'ј': 'j', 'ԁ': 'd', 'һ': 'h', 'ԛ': 'q', 'ԝ': 'w', 'ү': 'y', 'ɡ': 'g', 'ӏ': 'l', 'ḷ': 'l',
	'А': 'A', 'В': 'B', 'Е': 'E', 'К': 'K', 'М': 'M', 'Н': 'H', 'О': 'O', 'Р': 'P', 'С': 'C', 'Т': 'T', 'У': 'Y', 'Х': 'X',
	'Ѕ': 'S', 'І': 'I', 'Ј': 'J', 'Ԁ': 'D', 'Һ': 'H', 'Ү': 'Y', 'Ԝ': 'W', 'Ӏ': 'l',
	// Greek
	'α': 'a', 'ο': 'o', 'ρ': 'p', 'ν': 'v', 'τ': 't', 'ι': 'i', 'κ': 'k', 'υ': 'u', 'χ': 'x', 'ε': 'e', 'η': 'n',
	'Α': 'A', 'Β': 'B', 'Ε': 'E', 'Ζ': 'Z', 'Η': 'H', 'Ι': 'I', 'Κ': 'K', 'Μ': 'M', 'Ν': 'N', 'Ο': 'O', 'Ρ': 'P', 'Τ': 'T', 'Υ': 'Y', 'Χ': 'X',
	// Armenian and others often used as look-alikes
	'օ': 'o', 'ս': 'u', 'ց': 'g', 'ո': 'n', 'հ': 'h', 'զ': 'q',
	// Latin variants NFKC keeps
	'ı': 'i', 'ȷ': 'j', 'ʏ': 'y', 'ɑ': 'a', 'ℓ': 'l', 'ꓐ': 'B', 'ꓑ': 'P', 'ꓒ': 'p', 'ꓔ': 'T', 'ꓗ': 'K', 'ꓚ': 'C', 'ꓜ': 'Z', 'ꓝ': 'F', 'ꓞ': 'F', 'ꓟ': 'M', 'ꓠ': 'N', 'ꓡ': 'L', 'ꓢ': 'S', 'ꓣ': 'R', 'ꓤ': 'R', 'ꓦ': 'V', 'ꓧ': 'H', 'ꓪ': 'W', 'ꓫ': 'X', 'ꓬ': 'Y', 'ꓮ': 'A', 'ꓯ': 'A', 'ꓰ': 'E', 'ꓱ': 'E', 'ꓲ': 'I', 'ꓳ': 'O', 'ꓴ': 'U',
}
