package gate

// This file holds the gate's words: what consequential controls say in the web's most used
// languages and scripts (English, Spanish, French, German, Italian, Portuguese, Dutch, Polish,
// Russian, Ukrainian, Turkish, Vietnamese, Indonesian, Czech, Slovak, Swedish, Danish,
// Norwegian, Finnish, Hungarian, Romanian, South Slavic, Baltic in words; Arabic, Hindi, Japanese,
// Korean, simplified and traditional Chinese as stems matched anywhere), the stems German and
// Dutch build compounds with, icon names, and the words of account-takeover and
// sensitive-settings pages. vocab.go compiles them.

// words are one category's entries: whole words or phrases in scripts that separate words
// with spaces (matched between non-letters after folding), and stems matched anywhere in
// scripts that do not, or that attach particles to words (Han, Kana, Hangul, Arabic,
// Devanagari).
type words struct {
	word     []string
	anywhere []string
}

var paymentWords = words{
	word: []string{
		// en
		"buy", "buy now", "purchase", "pay", "pay now", "payment", "checkout", "check out", "place order", "place your order",
		"order now", "complete order", "complete purchase", "confirm order", "confirm purchase", "confirm payment",
		"book now", "book it", "book this", "book tickets", "book a table", "book your", "reserve", "donate", "subscribe", "upgrade now", "add funds", "top up",
		"spending limit", "spend limit", "credit limit", "budget limit",
		// de
		"kaufen", "jetzt kaufen", "bestellen", "jetzt bestellen", "zahlungspflichtig bestellen", "kostenpflichtig bestellen", "bezahlen",
		"zahlen", "kaufabschluss", "abonnieren", "spenden", "buchen", "jetzt buchen", "buchung abschließen", "zur kasse",
		// fr
		"acheter", "acheter maintenant", "payer", "commander", "passer la commande", "valider la commande", "régler", "s'abonner", "abonner",
		"réserver", "réserver maintenant", "faire un don",
		// es
		"comprar", "comprar ahora", "pagar", "realizar pedido", "hacer pedido", "finalizar compra", "tramitar pedido", "suscribirse",
		"suscribir", "donar", "reservar", "reservar ahora",
		// it
		"acquista", "acquista ora", "compra", "compra ora", "paga", "paga ora", "ordina", "ordina ora", "prenota", "prenota ora",
		"abbonati", "procedi all'acquisto", "procedi al pagamento",
		// pt
		"comprar agora", "pagar agora", "finalizar pedido", "fazer pedido", "assinar", "reservar agora",
		// nl
		"kopen", "nu kopen", "koop", "koop nu", "afrekenen", "betalen", "nu betalen", "boeken", "nu boeken", "bestel", "bestel nu", "abonneren",
		// pl
		"kup", "kup teraz", "kupuję", "zapłać", "zapłać teraz", "zamów", "zamawiam", "zamawiam i płacę", "zarezerwuj", "subskrybuj", "płacę",
		// ru
		"купить", "купить сейчас", "оплатить", "оплата", "заказать", "оформить заказ", "забронировать", "подписаться", "оплатить заказ",
		// uk
		"купити", "оплатити", "замовити", "оформити замовлення", "забронювати", "підписатися",
		// tr
		"satın al", "şimdi satın al", "öde", "ödeme yap", "şimdi öde", "sipariş ver", "rezervasyon yap", "abone ol",
		// vi
		"mua", "mua ngay", "thanh toán", "đặt hàng", "đặt ngay", "đặt phòng", "đăng ký mua",
		// id
		"beli", "beli sekarang", "bayar", "bayar sekarang", "pesan sekarang", "checkout sekarang", "berlangganan",
	},
	anywhere: []string{
		"購入", "注文", "支払", "決済", "買う", "予約する", "お会計", "レジに進む",
		"购买", "支付", "付款", "下单", "结账", "订阅", "预订", "立即购买",
		"購買", "結帳", "訂閱", "預訂", "立即購買", "購読",
		"구매", "구입", "결제", "주문하기", "예약하기", "구독하기",
		"شراء", "اشتر", "ادفع", "الدفع", "دفع", "احجز", "اطلب الآن",
		"खरीदें", "ख़रीदें", "भुगतान", "बुक करें", "ऑर्डर करें",
	},
}

var sendingWords = words{
	word: []string{
		"send", "send money", "transfer", "wire", "wire money", "confirm transfer", "ship", "ship it", "ship now", "dispatch", "invite",
		"send invite", "send invitation",
		"senden", "absenden", "überweisen", "überweisung", "versenden", "verschicken", "einladen",
		"envoyer", "virement", "transférer", "expédier", "inviter",
		"enviar", "transferir", "transferencia", "despachar", "invitar",
		"invia", "inviare", "trasferisci", "bonifico", "spedisci", "invita",
		"enviar agora", "convidar",
		"verzenden", "versturen", "verstuur", "stuur", "overmaken", "uitnodigen",
		"wyślij", "wysłać", "przelej", "zaproś",
		"отправить", "перевести", "пригласить", "отправь",
		"надіслати", "відправити", "переказати", "запросити",
		"gönder", "transfer et", "davet et",
		"gửi", "chuyển tiền", "mời",
		"kirim", "kirim sekarang", "undang",
	},
	anywhere: []string{
		"送信", "送金", "振込", "振り込", "発送", "送る", "招待",
		"发送", "转账", "汇款", "发货", "邀请",
		"傳送", "發送", "轉帳", "匯款", "寄出", "邀請",
		"보내기", "전송", "송금", "초대",
		"إرسال", "أرسل", "ارسل", "تحويل",
		"भेजें", "भेजना", "आमंत्रित",
	},
}

var deletionWords = words{
	word: []string{
		"delete", "remove", "erase", "destroy", "close account", "deactivate", "unsubscribe", "wipe", "purge",
		"empty trash", "empty the trash", "empty bin", "empty the bin", "empty recycle bin", "empty folder", "empty inbox", "empty spam", "empty cart",
		"cancel subscription", "cancel my subscription", "cancel your subscription", "cancel the subscription",
		"cancel membership", "cancel my membership", "cancel order", "cancel my order", "cancel the order",
		"cancel plan", "cancel my plan", "cancel account", "cancel my account", "cancel booking", "cancel reservation",
		"cancel flight", "cancel payment", "cancel contract", "terminate", "revoke",
		"löschen", "entfernen", "löschung", "kündigung bestätigen", "konto schließen", "kündigen", "abbestellen", "stornieren", "leeren", "papierkorb leeren", "abmelden", "deaktivieren",
		"supprimer", "effacer", "résilier", "désabonner", "se désabonner", "vider", "vider la corbeille", "annuler l'abonnement", "annuler la commande", "désactiver",
		"eliminar", "borrar", "suprimir", "cancelar suscripción", "cancelar la suscripción", "cancelar pedido", "cancelar el pedido", "darse de baja", "dar de baja", "vaciar", "vaciar papelera", "anular", "desactivar",
		"elimina", "cancella", "rimuovi", "svuota", "annulla abbonamento", "annulla l'abbonamento", "disattiva", "disiscriviti",
		"excluir", "apagar", "remover", "cancelar assinatura", "desativar", "esvaziar",
		"verwijder", "verwijderen", "wissen", "opzeggen", "uitschrijven", "leegmaken", "deactiveren",
		"usuń", "usunąć", "usunięcie", "usuwanie", "skasuj", "wyczyść", "anuluj subskrypcję", "dezaktywuj", "wypisz się",
		"удалить", "удалите", "удаление", "удали", "стереть", "очистить", "отписаться", "деактивировать", "отменить подписку",
		"видалити", "видаліть", "видалення", "очистити", "відписатися", "деактивувати", "скасувати підписку",
		"sil", "kaldır", "hesabı sil", "hesabı kapat", "aboneliği iptal et", "devre dışı bırak", "boşalt",
		"xóa", "xoá", "gỡ", "hủy đăng ký", "huỷ đăng ký", "vô hiệu hóa",
		"hapus", "hapus akun", "berhenti berlangganan", "nonaktifkan", "kosongkan",
		// en synonyms
		"dispose", "discard", "nuke", "obliterate", "shred", "scrap", "trash", "reset to factory", "factory reset",
		// cs, sk, sv, da, no, fi, hu, ro, hr/sr/bs, sl, lt, lv, et
		"smazat", "smaž", "odstranit", "odstraň", "vymazat", "zrušit účet", "odstrániť", "vymazať", "zmazať",
		"radera", "ta bort", "slet", "slett", "poista", "tyhjennä", "törlés", "törlése", "töröl", "törlöm", "törli",
		"șterge", "şterge", "sterge", "ștergeți", "obriši", "izbriši", "izbrisati", "obrisati", "ištrinti", "dzēst", "kustuta",
	},
	anywhere: []string{
		"削除", "消去", "退会", "解約", "配信停止", "空にする", "登録解除",
		"删除", "移除", "注销", "退订", "取消订阅", "清空",
		"刪除", "註銷", "取消訂閱", "退訂", "پاک کن", "پاک کردن", "حذف کن",
		"삭제", "탈퇴", "구독 취소", "비우기", "해지",
		"حذف", "احذف", "إلغاء الاشتراك", "امسح",
		"हटाएं", "हटाएँ", "मिटाएं", "डिलीट", "सदस्यता रद्द",
	},
}

var publishingWords = words{
	word: []string{
		"publish", "post", "tweet", "share", "deploy", "release to production", "go live", "merge", "make public",
		"veröffentlichen", "posten", "bereitstellen", "teilen",
		"publier", "déployer", "partager",
		"publicar", "desplegar", "compartir",
		"pubblica", "condividi",
		"partilhar",
		"publiceren", "plaatsen", "delen",
		"opublikuj", "udostępnij",
		"опубликовать", "поделиться",
		"опублікувати", "поширити",
		"yayınla", "paylaş",
		"xuất bản", "chia sẻ", "đăng bài",
		"terbitkan", "publikasikan", "bagikan",
	},
	anywhere: []string{
		"公開", "投稿", "デプロイ", "发布", "发表", "部署", "分享", "發佈", "發布", "發表",
		"게시", "발행", "공유",
		"نشر", "انشر",
		"प्रकाशित",
	},
}

var accountWords = words{
	word: []string{
		"approve", "authorize", "authorise", "grant access", "allow access", "sign and", "change password", "reset password",
		"change email", "transfer ownership", "make admin", "add admin", "make owner", "add owner",
		"add ssh key", "new ssh key", "ssh key", "add gpg key", "new gpg key", "add deploy key", "add key",
		"disable two-factor", "turn off two-factor", "disable 2fa", "turn off 2fa", "remove two-factor", "disable mfa",
		"genehmigen", "autorisieren", "freigeben", "passwort ändern",
		"autoriser", "approuver", "changer le mot de passe",
		"autorizar", "aprobar", "cambiar contraseña",
		"autorizza", "approva",
		"aprovar",
		"autoriseren", "goedkeuren",
		"autoryzuj", "zatwierdź",
		"авторизовать", "разрешить доступ",
		"авторизувати",
		"yetkilendir", "onayla",
		"ủy quyền", "cho phép truy cập",
		"otorisasi", "izinkan akses",
	},
	anywhere: []string{"承認", "授权", "批准", "授權", "パスワード変更", "修改密码", "승인", "권한 부여", "تفويض", "अधिकृत"},
}

var submitWords = words{
	word:     []string{"submit", "soumettre", "einreichen", "enviar formulario", "invia modulo", "verzenden formulier", "wyślij formularz"},
	anywhere: []string{"提交", "送出", "제출"},
}

// compoundStems are German and Dutch verbs that end compound words ("Kontolöschen",
// "Accountverwijderen", "Sofortkaufen"): a word ending in one is in its category, unless it
// is one of the stem's harmless words.
var compoundStems = []struct {
	stem, reason string
	except       []string
}{
	{"löschen", ReasonDeletion, nil},
	{"löschung", ReasonDeletion, nil},
	{"loeschen", ReasonDeletion, nil},
	{"entfernen", ReasonDeletion, nil},
	{"kündigen", ReasonDeletion, nil},
	{"stornieren", ReasonDeletion, nil},
	{"deaktivieren", ReasonDeletion, nil},
	{"verwijderen", ReasonDeletion, nil},
	{"opzeggen", ReasonDeletion, nil},
	{"kaufen", ReasonPayment, []string{"einkaufen", "verkaufen"}},
	{"bestellen", ReasonPayment, []string{"abbestellen"}},
	{"bezahlen", ReasonPayment, nil},
	{"buchen", ReasonPayment, []string{"verbuchen"}},
	{"kopen", ReasonPayment, []string{"verkopen"}},
	{"betalen", ReasonPayment, nil},
	{"boeken", ReasonPayment, nil},
	{"überweisen", ReasonSending, nil},
	{"versenden", ReasonSending, nil},
	{"absenden", ReasonSending, nil},
	{"versturen", ReasonSending, nil},
	{"veröffentlichen", ReasonPublishing, nil},
	{"publiceren", ReasonPublishing, nil},
}

// iconWords are what icons are named by (their file names, icon-font classes, data-*
// attributes) when no word of a category says it.
var iconWords = map[string]string{
	"trash": ReasonDeletion, "bin": ReasonDeletion, "garbage": ReasonDeletion, "wastebasket": ReasonDeletion,
	"recycle": ReasonDeletion, "eraser": ReasonDeletion, "trashcan": ReasonDeletion,
	"cart-check": ReasonPayment, "credit-card": ReasonPayment, "creditcard": ReasonPayment, "wallet": ReasonPayment,
	"paper-plane": ReasonSending, "paperplane": ReasonSending, "send": ReasonSending,
}

// emoji are pictographs that name a category (often drawn alone, with aria-hidden, on a
// control with no other name).
var emoji = map[rune]string{
	'🗑': ReasonDeletion, '🚮': ReasonDeletion, '❌': ReasonDeletion, '⌫': ReasonDeletion,
	'💳': ReasonPayment, '💸': ReasonPayment, '💰': ReasonPayment, '💵': ReasonPayment, '💶': ReasonPayment, '💷': ReasonPayment, '🛍': ReasonPayment,
	'📤': ReasonSending, '📨': ReasonSending,
}

// takeoverWords, said by a control's form, dialog or section, make any commit in it an
// account change: whoever sets a recovery address, a forwarding rule, a key, an owner or an
// OAuth grant, or turns two-factor authentication off, takes the account over.
var takeoverWords = words{
	word: []string{
		"recovery email", "recovery e-mail", "recovery address", "recovery phone", "backup email", "backup e-mail", "backup phone", "secondary email",
		"forwarding", "forward a copy", "forward to", "auto-forward", "autoforward", "forwarding address",
		"ssh key", "ssh keys", "gpg key", "deploy key", "public key", "authorized keys", "authorized_keys",
		"two-factor", "two factor", "2fa", "2-step", "two-step", "mfa", "multi-factor", "authenticator", "security key", "passkey",
		"owner", "owners", "administrator", "admin", "admins", "super admin", "full access",
		"wants to access", "would like to access", "wants access", "access your account", "access to your account", "will be able to",
		"authorize", "authorise", "oauth", "delegate", "delegation", "api token", "access token", "personal access token",
		"wiederherstellungs-e-mail", "weiterleitung", "zwei-faktor", "zwei-faktor-authentifizierung", "inhaber", "eigentümer",
		"e-mail de récupération", "transfert", "double authentification", "propriétaire",
		"correo de recuperación", "reenvío", "verificación en dos pasos", "propietario",
		"email di recupero", "inoltro", "verifica in due passaggi", "proprietario",
		"e-mail de recuperação", "encaminhamento", "verificação em duas etapas", "proprietário",
		"herstel-e-mail", "doorsturen", "tweestapsverificatie", "eigenaar",
		"weryfikacja dwuetapowa", "przekazywanie", "właściciel",
		"резервная почта", "пересылка", "двухфакторная", "владелец",
		"двофакторна", "пересилання", "власник",
		"kurtarma e-postası", "yönlendirme", "iki adımlı", "sahip",
	},
	anywhere: []string{
		"再設定用", "予備のメール", "転送", "二段階認証", "2段階認証", "所有者", "オーナー",
		"恢复邮箱", "辅助邮箱", "转发", "双重验证", "两步验证", "所有者", "管理员",
		"復原電子郵件", "轉寄", "兩步驟驗證", "雙重驗證", "擁有者", "管理員",
		"복구 이메일", "전달", "2단계 인증", "소유자", "관리자",
	},
}

// sensitiveWords name account, security, billing and consent pages in their titles, headings,
// URL paths and form actions: a commit there asks unless the person's words name it.
var sensitiveWords = words{
	word: []string{
		"account settings", "account security", "manage account", "manage your account", "my account", "your account settings",
		"security", "security settings", "sign-in & security", "login & security", "password and security", "change password", "change your password",
		"billing", "payment methods", "payment method", "subscription", "subscriptions", "plan and billing",
		"two-factor", "2fa", "mfa", "two-step", "authentication", "sessions", "ssh", "keys", "tokens", "credentials", "recovery",
		"oauth", "authorize", "authorise", "consent", "permissions", "danger zone", "admin", "members", "forwarding",
		"delete account", "close account", "delete your account",
		"kontoeinstellungen", "sicherheit", "konto", "abrechnung",
		"paramètres du compte", "sécurité", "compte", "facturation",
		"configuración de la cuenta", "seguridad", "cuenta", "facturación",
		"impostazioni account", "sicurezza", "fatturazione",
		"configurações da conta", "segurança", "conta", "faturamento",
		"accountinstellingen", "beveiliging", "facturering",
		"ustawienia konta", "bezpieczeństwo", "konto",
		"настройки аккаунта", "безопасность", "аккаунт", "учетная запись",
		"налаштування облікового запису", "безпека",
		"hesap ayarları", "güvenlik", "hesap",
	},
	anywhere: []string{"アカウント設定", "セキュリティ", "アカウント", "账户设置", "账号设置", "安全设置", "帳戶設定", "安全性", "帳戶", "계정 설정", "보안", "계정"},
}

// commitPathWords mark a URL path or form action as account, security, billing or consent
// (path segments, split at "/", "-", "_" and ".").
var commitPathWords = []string{"account", "accounts", "security", "billing", "oauth", "authorize", "consent", "2fa", "mfa",
	"password", "passwords", "ssh", "keys", "tokens", "admin", "members", "forwarding", "recovery", "subscription", "subscriptions"}

// dismissLabels close or leave what a control is in: harmless whatever its dialog says.
var dismissLabels = []string{
	"cancel", "close", "no", "no thanks", "not now", "later", "maybe later", "back", "go back", "keep", "keep it", "dismiss", "stay", "never mind", "x", "×", "✕", "✖",
	"abbrechen", "schließen", "nein", "zurück", "behalten",
	"annuler", "fermer", "non", "retour", "garder",
	"cancelar", "cerrar", "no", "volver", "mantener",
	"annulla", "chiudi", "indietro",
	"fechar", "não", "voltar",
	"annuleren", "sluiten", "nee", "terug",
	"anuluj", "zamknij", "nie", "wróć",
	"отмена", "отменить", "закрыть", "нет", "назад",
	"скасувати", "закрити", "ні",
	"iptal", "kapat", "hayır", "geri",
	"hủy", "huỷ", "đóng", "không",
	"batal", "tutup", "tidak", "kembali",
	"キャンセル", "閉じる", "いいえ", "戻る", "取消", "关闭", "否", "返回", "關閉", "취소", "닫기", "아니요",
	"إلغاء", "إغلاق", "لا", "रद्द करें", "बंद करें",
}

// messageWords name a field whose commit sends what it holds to someone: a chat's, a
// comment's or a reply's box.
var messageWords = words{
	word: []string{
		"message", "messages", "reply", "comment", "chat", "write a message", "send a message", "dm", "respond", "compose",
		"nachricht", "antwort", "antworten", "kommentar",
		"répondre", "réponse", "commentaire", "écrire un message",
		"mensaje", "responder", "respuesta", "comentario", "comentar",
		"messaggio", "rispondi", "commento",
		"mensagem", "comentário",
		"bericht", "reageer", "reactie",
		"wiadomość", "odpowiedz", "komentarz",
		"сообщение", "ответить", "комментарий", "написать",
		"повідомлення", "відповісти", "коментар",
		"mesaj", "yanıtla", "yorum",
		"tin nhắn", "trả lời", "bình luận",
		"pesan", "balas", "komentar",
	},
	anywhere: []string{"メッセージ", "返信", "コメント", "消息", "留言", "回复", "评论", "訊息", "回覆", "評論", "메시지", "답장", "댓글", "رسالة", "رد", "संदेश", "जवाब"},
}

// visibilityWords are what a chosen option, checked box or hidden value says when it opens
// something to everyone: a visibility set to Public and saved publishes what it covers. They
// are judged only as a form's chosen state at its commit, never as a button's label ("Public
// library" is a place).
var visibilityWords = words{
	word: []string{
		"public", "anyone with the link", "anyone on the internet", "anyone can view", "anyone can edit", "everyone", "visible to everyone",
		"unlisted", "world readable", "open to all",
		"öffentlich", "jeder mit dem link", "tout le monde", "toute personne disposant du lien", "público", "pública",
		"cualquier persona con el enlace", "pubblico", "pubblica", "chiunque abbia il link", "openbaar", "iedereen", "publiczny",
		"publiczne", "wszyscy", "публичный", "публично", "всем", "herkese açık", "công khai", "publik", "umum", "offentlig", "julkinen",
	},
	anywhere: []string{"公開", "公开", "所有人", "全員", "모든 사용자", "공개", "عام", "सार्वजनिक"},
}
